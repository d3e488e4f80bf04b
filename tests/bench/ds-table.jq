# ds-table.jq - the markdown table of tests/bench/tswap-bench-deepspeed's
# results.json: one line per row, A = tswap (ds2 on the aa row), B =
# DeepSpeed's handle.
def f($d): if . == null then "-" else (. * pow(10; $d) | round / pow(10; $d) | tostring) end;
def ci: if .ci95 == null then "n/a" else "\(.ci95[0] | f(2))-\(.ci95[1] | f(2))" end;
# The side B line: which handle (the C++ driver, or DeepSpeed's op from
# Python: its builder and the -O that wins in its flags).
def side:
	if (.meta.side // "cpp") == "python" then
		"side: python, async_io op by \(.meta.py_build.builder), effective \([.meta.py_build.cflags | scan("-O[0-3s]")] | last // "-O?"), torch \(.meta.py_build.torch), tswap_bounce in the engine: \(.meta.tswap_bounce)"
	else "side: cpp" end;
"tswap vs DeepSpeed \(.meta.ds_version) (\(side); pinned sources: \(.meta.ds_pinned)), \(.meta.pairs) pairs of \(.meta.runtime_s) s, \(.meta.host), \(.meta.cpus) CPUs, load \(.meta.load_before) -> \(.meta.load_after)",
"",
"| target.row | A GB/s | B GB/s | A/B GB/s median [95% CI] | A CPU s/GB | B CPU s/GB | A/B CPU median [95% CI] | submits/GB A B | waits/GB A B | blocks per io_submit A / B | shapes | bytes | KiB/request A B |",
"|---|---|---|---|---|---|---|---|---|---|---|---|---|",
(.rows[] |
 "| \(.row) | \(.gbs.a | f(3)) | \(.gbs.b | f(3)) | \(.ratio_gbs.median | f(3)) [\(.ratio_gbs | ci)] | \(.cpu_s_per_gb.a | f(4)) | \(.cpu_s_per_gb.b | f(4)) | \(.ratio_cpu.median | f(3)) [\(.ratio_cpu | ci)] | \(.shape.a.submits_per_gb | f(1)) \(.shape.b.submits_per_gb | f(1)) | \(.shape.a.waits_per_gb | f(1)) \(.shape.b.waits_per_gb | f(1)) | \(.shape.a.hist // "-") / \(.shape.b.hist // "-") | \(if .shape.same then "same" else "differ" end) | \(.bytes_ok) | \(.req_kib.a | f(0)) \(.req_kib.b | f(0)) |")
