/* SPDX-License-Identifier: MIT */
/*
 * libifunc.so - a library whose exported function ifunc_entry() calls its
 * exported IFUNC ifunc_pick() through the PLT, bound lazily: the first call
 * goes through ld.so's _dl_runtime_resolve, which keeps its CFA in rbx,
 * and _dl_fixup, which runs the resolver resolve_pick().  The resolver
 * calls ifunc_hook, set by the program (selfsample), so that a sample
 * taken there has ld.so's resolver on its stack, as every process with
 * lazy binding has while it starts.  Built -shared -fPIC as
 * $(O)/targets/libifunc.so; the program dlopen()s it with RTLD_LAZY.
 */
#define STEP __attribute__((noinline, noclone, visibility("default")))

void (*ifunc_hook)(void) __attribute__((visibility("default")));

static unsigned long pick_one(unsigned long x)
{
	return x + 1;
}

static unsigned long (*resolve_pick(void))(unsigned long)
{
	if (ifunc_hook)
		ifunc_hook();
	return pick_one;
}

unsigned long ifunc_pick(unsigned long x)
	__attribute__((ifunc("resolve_pick"), visibility("default")));

STEP unsigned long ifunc_entry(unsigned long x)
{
	/* through the PLT: an exported symbol may be interposed */
	return ifunc_pick(x) + 1;
}
