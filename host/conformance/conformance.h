/*
 * `ksched conformance`: run conformance scenarios and compare every
 * scheduling decision with the expected file beside each scenario.
 *
 * The pieces, usable on their own (tests use them):
 *   scenario.h  reading NAME.yaml          expected.h  reading NAME.expected.yaml
 *   runner.h    running a scenario         compare.h   comparing the results
 *   conf_result.h  the result records
 */
#ifndef KS_CONFORMANCE_H
#define KS_CONFORMANCE_H

/* ksched conformance [--plugin-dir DIR]... [--no-default-plugin-path]
 *                    [--filter SUBSTR] [-v] DIR_OR_FILE...
 * argv[0] is "conformance". Prints "PASS name" / "FAIL name" (with one line
 * per mismatch) for each scenario and ends with "N passed, N failed".
 * Returns 0 when every scenario passes, 1 when any fails (or none was
 * found), 2 on a usage error. Main thread only. */
int ks_cli_conformance(int argc, char **argv);

#endif
