/* bench_read.c - the reader alone, for scripts/bench: reads a callgrind profile as augment
 * reads a block that is not JIT code (read-ahead thread, cost lines in runs and calls to
 * sinks; augment's JIT blocks take other sinks), with sinks that keep nothing, nothing
 * rewritten or written, and prints the main thread's CPU seconds (user + system).
 * usage: bench-read PROFILE   (exit 1 with the reader's error) */
#include <stdio.h>
#include <time.h>

#include "augment/augment.h"
#include "callgrind/callgrind_reader.h"
#include "core/diag.h"
#include "core/io.h"

static void run_sink(void *ctx, uint32_t fn, uint32_t file, const struct cg_cost_run *run)
{
	(void)fn, (void)file;
	*(uint64_t *)ctx += run->lines;
}

static void call_sink(void *ctx, uint32_t fn, uint32_t file, const struct cg_call_line *call)
{
	(void)fn, (void)file, (void)call;
	*(uint64_t *)ctx += 2;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: bench-read PROFILE\n");
		return 2;
	}
	struct augment_opts defaults;   /* augment's --max-line */
	augment_opts_init(&defaults);
	struct diag d = { 0 };
	struct input *in = input_open(argv[1], &d);
	struct cg_reader *r = in ? cg_reader_new(in, defaults.max_line) : NULL;
	struct cg_record rec;
	uint64_t sunk = 0, records = 0, blocks = 0;
	int k = -1;
	if (r)
		while ((k = cg_reader_next(r, &rec, &d)) == 1) {
			records++;
			if (rec.kind == CG_FN) {
				blocks++;
				cg_reader_sink_costs(r, rec.fn, run_sink, &sunk);
				cg_reader_sink_calls(r, call_sink);
			}
		}
	cg_reader_free(r);
	input_close(in);
	if (k < 0) {
		fprintf(stderr, "bench-read: %s\n", d.msg);
		return 1;
	}
	struct timespec cpu;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &cpu);
	printf("%.3f\n", (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	fprintf(stderr, "bench-read: %llu records, %llu fn= blocks, %llu lines to the sinks\n",
		(unsigned long long)records, (unsigned long long)blocks, (unsigned long long)sunk);
	return 0;
}
