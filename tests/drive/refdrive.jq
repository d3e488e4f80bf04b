# refdrive.jq - reference-drive profiles (tests/drive/profiles/*.json):
# their checks, the throttle caps they set and the GB/s the caps allow
# (tests/drive/README.md). A jq module: jq -L tests/drive 'include
# "refdrive"; ...'; used by tests/drive/refdrive and expect.jq.

def is_count: type == "number" and . >= 0 and . == floor and . < 1e15;

# problems: a profile's errors, one line each ([] when it is good).
def problems:
	def caps($where):
		if type != "object" then ["\($where): must be an object {bps, iops}"]
		else [(.bps, .iops) | select(is_count | not)] as $bad
		| if ($bad | length) > 0 then ["\($where): bps and iops must be whole numbers >= 0 (0: no cap)"] else [] end end;
	if type != "object" then ["profile: must be a JSON object"] else
	[ (if (.name | type) == "string" and (.name | test("^[a-z0-9-]+$")) then empty
	   else "name: must be lower-case letters, digits and dashes" end),
	  (if (.size_mib | is_count) and .size_mib >= 64 and .size_mib <= 65536 then empty
	   else "size_mib: must be a whole number of MiB, 64..65536" end),
	  (if .max_sectors_kb == null or ((.max_sectors_kb | is_count) and .max_sectors_kb >= 4)
	   then empty else "max_sectors_kb: must be a whole number >= 4 or null" end),
	  (.read | caps("read")[]), (.write | caps("write")[]),
	  (if .cliff == null then empty
	   elif (.cliff | type) != "object" then "cliff: must be an object or null"
	   elif ([.cliff.after_bytes, .cliff.after_s] | map(select(. != null)) | length) != 1
	   then "cliff: needs exactly one of after_bytes, after_s"
	   elif ((.cliff.after_bytes // .cliff.after_s) | is_count and . > 0) | not
	   then "cliff: after_bytes or after_s must be a whole number > 0"
	   else (.cliff.write | caps("cliff.write")[]) end) ]
	end;

# caps($phase): the caps in force, {read: {bps, iops}, write: {bps, iops}};
# $phase "post": after the write cliff (the cliff's write caps).
def caps($phase):
	{read: .read, write: (if $phase == "post" and .cliff != null then .cliff.write else .write end)};

# v1lines($phase; $majmin): "FILE LINE" for each blkio.throttle.* file
# (cgroup v1; 0 removes a cap).
def v1lines($phase; $majmin):
	caps($phase) as $c
	| ["read", "write"][] as $d | ["bps", "iops"][] as $k
	| "blkio.throttle.\($d)_\($k)_device \($majmin) \($c[$d][$k])";

# v2line($phase; $majmin): the io.max line (cgroup v2; max: no cap).
def v2line($phase; $majmin):
	caps($phase) as $c
	| def v($d; $k): $c[$d][$k] | if . == 0 then "max" else tostring end;
	"\($majmin) rbps=\(v("read"; "bps")) wbps=\(v("write"; "bps")) riops=\(v("read"; "iops")) wiops=\(v("write"; "iops"))";

# bios($lim; $x): how many bios the block layer makes of one $x-byte
# iocb, as [fewest, nominal, most]. $lim: the state's .limits
# (max_sectors_kb, max_segments, page_size). Direct I/O fills a bio with at
# most 256 page vectors (BIO_MAX_VECS), then splits it at max_sectors_kb
# and max_segments: a piece holds at least max_segments pages. Nominal (no
# two pages physically adjacent, as measured for fio's and tswap's
# buffers): pieces of min(max_sectors_kb KiB, max_segments pages). Fewest:
# every page adjacent, pieces of max_sectors_kb. Most: one more piece per
# extra 256-page bio (its end need not fall on a piece boundary).
def bios($lim; $x):
	($lim.max_sectors_kb * 1024) as $ms
	| ([$ms, $lim.max_segments * $lim.page_size] | min) as $seg
	| ($x / $seg | ceil) as $nom
	| [($x / $ms | ceil), $nom, $nom + ($x / (256 * $lim.page_size) | ceil) - 1];

# gbs($cap; $bytes; $b): GB/s (1e9 B/s) of $bytes per operation made of
# $b bios under $cap {bps, iops}; null when nothing caps it.
def gbs($cap; $bytes; $b):
	[(if $cap.bps > 0 then $cap.bps else empty end),
	 (if $cap.iops > 0 then $cap.iops * $bytes / $b else empty end)]
	| if length == 0 then null else min / 1e9 end;

# iocbs: the iocbs of one operation as [{n, size}]: fio's own engines
# (block 0 or absent) issue the operation (bs = .tensor) as one iocb;
# tswap cuts it into .threads parts, each into blocks of .block bytes,
# the last the remainder (docs/engine.md "The model").
def iocbs:
	(.threads // 1) as $p | (.tensor / $p) as $part
	| if (.block // 0) <= 0 or .block >= $part then [{n: $p, size: $part}]
	  else ($part / .block | floor) as $k | ($part - $k * .block) as $r
	  | [{n: ($p * $k), size: .block}] + (if $r > 0 then [{n: $p, size: $r}] else [] end) end;

# expect($s; $phase): a point ({rw, tensor, block, threads}) with the GB/s
# drive state $s allows at $phase ("pre", or "post" the cliff):
# expected_gbs at the nominal bio count, expected_range at the most and
# fewest bios, exact when both give the same (the bandwidth cap binds,
# or the split is certain), bios_per_op, iocbs_per_op.
def expect($s; $phase):
	.rw as $rw | ($s.profile | caps($phase)[$rw]) as $cap
	| iocbs as $io
	| [range(0; 3) as $i | $io | map(.n * bios($s.limits; .size)[$i]) | add] as $b
	| [gbs($cap; .tensor; $b[2]), gbs($cap; .tensor; $b[1]), gbs($cap; .tensor; $b[0])] as $g
	| . + {expected_gbs: $g[1], expected_range: [$g[0], $g[2]], exact: ($g[0] == $g[2]),
	       bios_per_op: $b[1], iocbs_per_op: ($io | map(.n) | add)};
