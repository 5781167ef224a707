/* SPDX-License-Identifier: MIT */
/*
 * image_set.c - the mapped files of a recording, held open by module id
 * (see image_set.h).  Images never move once added (the set keeps
 * pointers), so a path handed out stays valid while another thread adds.
 */
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "image_set.h"
#include "internal.h"

/* Past this many held files, paths have to do: descriptors are finite. */
#define IMAGE_MAX_HELD 512

struct image {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	int fd;			/* -1: not held */
	char *path;		/* /proc/self/fd/N, or the path */
};

struct image_set {
	pthread_mutex_t lock;
	unsigned refs;		/* under lock */
	struct image **images;
	size_t n, cap, held;
	uint32_t *image_of;	/* by module id: index in images + 1; 0 unknown */
	size_t image_of_cap;
};

int image_set_new(struct image_set **ret)
{
	struct image_set *s = calloc(1, sizeof(*s));

	if (!s)
		return error_setx(-ENOMEM, "out of memory");
	pthread_mutex_init(&s->lock, NULL);
	s->refs = 1;
	*ret = s;
	return 0;
}

struct image_set *image_set_ref(struct image_set *s)
{
	pthread_mutex_lock(&s->lock);
	s->refs++;
	pthread_mutex_unlock(&s->lock);
	return s;
}

void image_set_unref(struct image_set *s)
{
	unsigned left;
	size_t i;

	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	left = --s->refs;
	pthread_mutex_unlock(&s->lock);
	if (left)
		return;
	for (i = 0; i < s->n; i++) {
		if (s->images[i]->fd >= 0)
			close(s->images[i]->fd);
		free(s->images[i]->path);
		free(s->images[i]);
	}
	free(s->images);
	free(s->image_of);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

/* The index + 1 of M's file, added if new; 0 with the error set. */
static uint32_t image_of(struct image_set *s, const struct image_file *f, int *err)
{
	struct image *im;
	void *v;
	size_t i;

	for (i = 0; i < s->n; i++) {
		im = s->images[i];
		if (im->inode == f->inode && im->dev_major == f->dev_major &&
		    im->dev_minor == f->dev_minor)
			return (uint32_t)i + 1;
	}
	im = calloc(1, sizeof(*im));
	v = s->images;
	*err = im ? grow_array(&v, &s->cap, s->n + 1, sizeof(*s->images))
		  : error_setx(-ENOMEM, "out of memory");
	s->images = v;
	if (*err < 0) {
		free(im);
		return 0;
	}
	*im = (struct image){ .dev_major = f->dev_major, .dev_minor = f->dev_minor,
			      .inode = f->inode, .fd = -1 };
	if (s->held < IMAGE_MAX_HELD)
		im->fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (im->fd >= 0 ? asprintf(&im->path, "/proc/self/fd/%d", im->fd) < 0
			: !(im->path = strdup(f->path)))
		im->path = NULL;
	if (!im->path) {
		if (im->fd >= 0)
			close(im->fd);
		free(im);
		*err = error_setx(-ENOMEM, "out of memory");
		return 0;
	}
	if (im->fd >= 0)
		s->held++;
	s->images[s->n++] = im;
	return (uint32_t)s->n;
}

int image_set_add(struct image_set *s, uint32_t id, const struct image_file *f)
{
	uint32_t idx;
	void *v;
	int r = 0;

	pthread_mutex_lock(&s->lock);
	v = s->image_of;
	r = grow_array_zeroed(&v, &s->image_of_cap, (size_t)id + 1, sizeof(*s->image_of));
	s->image_of = v;
	idx = r == 0 ? image_of(s, f, &r) : 0;
	if (idx)
		s->image_of[id] = idx;
	pthread_mutex_unlock(&s->lock);
	return r;
}

const char *image_set_path(struct image_set *s, uint32_t id)
{
	const char *path = NULL;

	pthread_mutex_lock(&s->lock);
	if (id < s->image_of_cap && s->image_of[id])
		path = s->images[s->image_of[id] - 1]->path;
	pthread_mutex_unlock(&s->lock);
	return path;
}
