/* record_det.h - the settings that make a runtime's instruction counts the same from run
 * to run (docs/record.md 1.1), added to a plan (record_plan.h) unless the command sets the
 * same thing itself. Pure: reads the command line and the environment it is given. */
#ifndef CGJIT_RECORD_DET_H
#define CGJIT_RECORD_DET_H

struct record_plan;

/* Adds the determinism settings of PLAN->runtime to PLAN: flags after PLAN->flags, NAME=VALUE
 * entries after PLAN->env, each also in PLAN->det as shown. A setting that the command sets
 * itself is not added: an argument of ARGS (the program's arguments, NULL-terminated; one
 * that only looks like the flag counts too), an entry of ENVP (NULL-terminated NAME=VALUE,
 * the environment the program will get; NULL: none), or a word of the runtime's options
 * variable (JAVA_TOOL_OPTIONS...) in ENVP; PLAN->det_yours lists those, pointing into ARGS
 * and ENVP. A runtime without settings leaves PLAN as it is. */
void record_det_add(struct record_plan *plan, char *const *args, const char *const *envp);

#endif
