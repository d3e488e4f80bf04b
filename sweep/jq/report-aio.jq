# report-aio.jq - what report.sh write_report says of best-aio.json (the
# input), in one jq run: its .trusted (JSON), its length, why (the reason
# it has no aio block, or aggregate.json's .best.aio_source.why, from
# --slurpfile agg, when it has one), each followed by an ASCII unit
# separator (0x1f), then the file as `jq .` prints it. Use with -j.
def text: if type == "string" then . else tojson end | sub("\n+$"; "");
(.trusted | tojson), "\u001f",
(length | tostring), "\u001f",
(if .trusted != false and length != 0 then $agg[0].best.aio_source.why | text
 elif .trusted == false then .reason | text
 else "" end), "\u001f",
.
