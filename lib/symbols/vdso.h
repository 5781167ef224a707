/* SPDX-License-Identifier: MIT */
/* vdso.h - the vDSO of this kernel as a readable file. */
#ifndef PROF_VDSO_H
#define PROF_VDSO_H

/* A path to a copy of this process's vDSO image ("/proc/self/fd/N"), or NULL. */
const char *vdso_image_path(void);

#endif /* PROF_VDSO_H */
