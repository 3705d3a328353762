/*
 * xorshift.h --- the unit tests' one pseudo-random generator (Marsaglia's
 * xorshift64, fixed seed): the same numbers on every machine and run, so
 * that a failing case can be run again.
 */
#ifndef E2F_TESTS_XORSHIFT_H
#define E2F_TESTS_XORSHIFT_H

#include <stdint.h>

static uint64_t state = 88172645463325252ULL;

static uint64_t rnd(void)
{
	state ^= state << 13;
	state ^= state >> 7;
	state ^= state << 17;
	return state;
}

#endif
