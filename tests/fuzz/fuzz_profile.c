/* fuzz_profile.c - libFuzzer target for the report commands' loader (profile_read.c,
 * profile.c): the input is a callgrind or cachegrind file, read into the per-function
 * model. Checked: an error is reported exactly when the load fails, and a loaded profile's
 * totals are the sums of its functions' self costs. */
#include <stddef.h>
#include <stdint.h>

#include "diag.h"
#include "fuzz.h"
#include "io.h"
#include "profile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct input *in = input_open_mem(data, size, "fuzz.out");
	struct profile p;
	struct profile_opts o = { .max_line = 4096, .fold_recursion = size & 1 };
	struct diag d = { 0 };
	int rc = profile_load_input(&p, in, &o, &d);
	FUZZ_CHECK(rc == 0 ? !d.set : rc == -1 && d.set);
	for (unsigned e = 0; rc == 0 && e < p.nevents; e++) {
		uint64_t sum = 0;
		for (size_t i = 0; i < p.nfns; i++) {
			sum += p.fns[i].self[e];
			FUZZ_CHECK(p.fns[i].name && p.fns[i].obj && p.fns[i].file);
			FUZZ_CHECK(p.cachegrind ? p.fns[i].incl[e] == p.fns[i].self[e] : 1);
		}
		FUZZ_CHECK(sum == p.totals[e]);
	}
	profile_free(&p);
	input_close(in);
	return 0;
}
