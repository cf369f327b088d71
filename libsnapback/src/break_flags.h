/* SPDX-License-Identifier: Apache-2.0 */
/* What a break source knows of a break beyond snapback_break, which must not grow (its size is part of
 * the soname): the AdBreak fields open, unfilled, restrict_skip and restrict_jump. A list of them runs
 * beside a list of snapback_break, index for index; NULL where a list has none (every flag false). */
#ifndef SNAPBACK_BREAK_FLAGS_H
#define SNAPBACK_BREAK_FLAGS_H

#include <stdbool.h>

struct sb_break_flags {
    bool open, unfilled, restrict_skip, restrict_jump;
};

#endif
