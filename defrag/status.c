/*
 * status.c --- e2defrag's exit status, decided in one place from what the
 * run did (doc/design.md: Exit codes).  1 means that another run could
 * still do more: this one stopped short of its plan (--max-time,
 * --max-units: between two units), and
 * the files it did not reach are left for the next.  A run that did all
 * it could exits 0, files short of best included: planning is the same
 * every time on the same disk and one run is a fixed point, so another
 * run would find nothing more to do for them (report_short names them
 * and says why).  Signals (32) and failed moves (4) keep their status;
 * a device that failed a read or write of the data stopped the run (8).
 */
#include "report.h"

int run_exit_status(const struct plan *plan, const struct run_state *st,
		    const uint8_t *result)
{
	uint64_t i;

	if (st && st->device_error)
		return EXIT_OPERATIONAL;
	if (st && st->cancelled)
		return EXIT_CANCELLED;
	if (st && st->failed)
		return EXIT_FAILED;
	if (st && st->timed_out)
		return EXIT_MORE;
	for (i = 0; result && i < plan->nmoves; i++)
		if (result[plan->moves[i].file] == FR_NOT_REACHED)
			return EXIT_MORE;
	return EXIT_OK;
}
