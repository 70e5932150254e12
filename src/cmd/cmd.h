/* cmd.h - subcommand entry points: argv in, exit status out (0 ok, 1 failed, 2 usage). */
#ifndef CGJIT_CMD_H
#define CGJIT_CMD_H

#define CGJIT_VERSION "0.1.0"

int cmd_augment(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_check(int argc, char **argv);
int cmd_timeline(int argc, char **argv);
int cmd_flamegraph(int argc, char **argv);
int cmd_record(int argc, char **argv);

#endif
