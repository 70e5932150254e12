/* pseudo_name.c - strict recognition of "0x%016lx" (and "0x%08lx") names
 * (docs/formats.md 2.1, 2.6). */
#include "callgrind/pseudo_name.h"
#include "core/scan.h"

int pseudo_name_parse(const char *name, size_t len, uint64_t *addr, size_t *head_len)
{
	if (len < 10 || name[0] != '0' || name[1] != 'x')
		return 0;
	size_t n = 2;
	uint64_t v = 0;
	while (n < len && name[n] != '\'') {
		int h = hexval(name[n]);
		/* callgrind prints lowercase digits only */
		if (h < 0 || (name[n] >= 'A' && name[n] <= 'F'))
			return 0;
		v = (v << 4) | (uint64_t)h;
		n++;
		if (n > 18)
			return 0;
	}
	if (n != 18 && n != 10)
		return 0;
	*addr = v;
	*head_len = n;
	return 1;
}
