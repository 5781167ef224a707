/* SPDX-License-Identifier: MIT */
/*
 * prof/symbolize.h - naming a spool's frames: functions, modules, inline
 * chains and source lines.  The conventions of the whole API are at the
 * top of <prof/prof.h>.
 */
#ifndef LIBPROF_SYMBOLIZE_H
#define LIBPROF_SYMBOLIZE_H

#include <prof/spool.h>

#ifdef __cplusplus
extern "C" {
#endif

/*
 * A frame as people read it.  FUNCTION is a symbol name when FOUND, else a
 * stand-in that still tells frames apart: "ladder+0x1234" (module basename
 * and file offset) for a user frame without a symbol, "0xffffffff81000010"
 * for a kernel or anonymous frame, "[truncated: stack-copy]" for where an
 * unwind stopped (prof_unwind_error_name() of its cause).  C++ and Rust
 * names are demangled unless the symbolizer was told not to.  MODULE is
 * the basename of the module's path, "[kernel]", "[anon]", or "" for a
 * truncation marker.  Where the module's debug info was found, one spool
 * frame may stand for several of these: see
 * prof_symbolizer_frame_inlines().  Strings are lent by the symbolizer.
 */
struct prof_resolved_frame {
	size_t sz;		/* sizeof(struct prof_resolved_frame) */
	const char *function;
	const char *module;
	uint64_t offset;	/* how far into the symbol the address lies; 0 without
				 * one, and for inlined frames */
	bool found;		/* FUNCTION is a symbol name (or a DWARF one) */
	bool inlined;		/* a function inlined into the frame before it */
	uint32_t line;		/* source line, 0 unknown: of the address in the innermost
				 * frame of a chain, of the call to the next frame in the
				 * others */
	const char *file;	/* the source file as shown: its path under the compilation
				 * directory when short, else its basename; NULL unknown */
	const char *file_path;	/* the source file's path as the debug info gives it (a
				 * relative one is relative to the compilation
				 * directory); NULL unknown */
	const char *names_from;	/* where FUNCTION came from, when FOUND: ".symtab",
				 * ".dynsym only", ".gopclntab", "debug file by
				 * build-id", "debug file by debuglink", "debug file
				 * from debuginfod", "DWARF", "recorded" (the symbols
				 * the recording captured of a deleted or replaced
				 * file), "kallsyms", "perf map", "jitdump" (or
				 * "perf map or jitdump" where both named JIT code),
				 * "python";
				 * NULL when not found */
	const char *debug_missing;	/* the debug file the module's .gnu_debuglink names,
					 * found nowhere here; NULL otherwise */
};

struct prof_symbolizer;

struct prof_symbolizer_opts {
	size_t sz;			/* sizeof(struct prof_symbolizer_opts) */
	bool no_demangle;		/* names as the symbol tables spell them */
	const char *debug_dirs;		/* colon-separated directories laid out as
					 * /usr/lib/debug, searched before it; NULL none */
	bool debuginfod;		/* ask the servers of DEBUGINFOD_URLS, by build-id,
					 * for debug info not found on this machine */
	unsigned debuginfod_timeout_s;	/* the most one such lookup may take; 0: the
					 * DEBUGINFOD_TIMEOUT variable, else 30 */
	bool no_dwarf;			/* names from the symbol tables alone: no
					 * inline frames, no source lines, and debug
					 * files read only for their .symtab (DWARF
					 * is decompressed and indexed megabytes) */
};

/*
 * A symbolizer over the definitions of SP (which must outlive it).  It
 * reads SP's tables at each call, so it also sees modules, frames and
 * symbol records read after its creation.  Names come, in this order, from
 * the spool's symbol records of the frame's scope (kernel, process or
 * module: they win, being what the recording saw), then for user frames
 * from the ELF file at the module's path (.symtab, else .dynsym; only
 * absolute paths: not [vdso] nor anonymous modules).  ELF files are opened
 * on first need, once per (path, build-id).  A file that cannot be read,
 * or whose build-id differs from the module record's, is reported once
 * through the log callback at PROF_LOG_WARN (its names are still used on a
 * mismatch).
 *
 * Debug info is looked for as gdb does, once per file: in the file itself;
 * as DIR/.build-id/xx/yyyy.debug (the file's build-id, else the recorded
 * one) for each of OPTS' debug_dirs, then /usr/lib/debug; through the
 * file's .gnu_debuglink (its CRC checked) beside the file, in a .debug/
 * directory beside it, then as DIR/<the file's directory>/NAME for the
 * same directories; and last, if OPTS asks, from debuginfod.  Where found,
 * the DWARF adds the functions inlined at each address and source lines
 * (unless OPTS' no_dwarf), and a debug file's .symtab stands in for a
 * stripped file's.  Where each
 * file's debug info came from is logged at PROF_LOG_DEBUG; a debuginfod
 * lookup that fails or runs out of time is logged at PROF_LOG_WARN, and
 * debuginfod is not asked again.
 *
 * OPTS NULL means defaults (demangle, no extra directories, no debuginfod).
 * Returns: 0 and *ret; -EINVAL (SP NULL, opts invalid, debuginfod asked
 * for without DEBUGINFOD_URLS); -ENOTSUP (debuginfod asked for, but this
 * library was built without libdebuginfod); -ENOMEM.
 */
int prof_symbolizer_new(const struct prof_spool *sp, const struct prof_symbolizer_opts *opts,
			struct prof_symbolizer **ret);

/*
 * Resolve the frame with spool id FRAME into the frames it stands for,
 * outermost first: *RET_N (at least 1) frames at (*RET)[0..*RET_N-1], the
 * function that holds the address, then each function inlined there into
 * the one before it (inlined set), the innermost last, as a root-to-leaf
 * stack reads.  Each frame is resolved once and then served from a cache
 * (reset when new symbol records were read).  The array, the frames and
 * their strings stay valid until prof_symbolizer_free() or
 * prof_spool_close(), whichever comes first.  A missing or damaged file is
 * not an error: the frame gets a stand-in name (and a warning is logged).
 * Returns: 0; -EINVAL for an id that is not a defined frame; -ENOMEM.
 */
int prof_symbolizer_frame_inlines(struct prof_symbolizer *s, uint32_t frame,
				  const struct prof_resolved_frame *const **ret, size_t *ret_n);

/*
 * The outermost frame of prof_symbolizer_frame_inlines(), the function
 * holding the address, copied into *RET (whose sz the caller set; its
 * strings are lent as that function's are).
 * Returns: 0; -EINVAL for an id that is not a defined frame, or RET's sz
 * not set; -ENOMEM.
 */
int prof_symbolizer_frame(struct prof_symbolizer *s, uint32_t frame,
			  struct prof_resolved_frame *ret);

/* Close the ELF files and free S (NULL: nothing). */
void prof_symbolizer_free(struct prof_symbolizer *s);

#ifdef __cplusplus
}
#endif

#endif /* LIBPROF_SYMBOLIZE_H */
