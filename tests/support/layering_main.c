// SPDX-License-Identifier: MIT
/* Link-time layering check (tests/CMakeLists.txt, npf_core_layering): this program links
 * every object of npf_core with npf_core's own dependencies only. It does nothing when
 * run; that it links at all is the check. */
int main(void)
{
	return 0;
}
