# plan.jq - The plan (plan.tsv text, jq -R -s) as a JSON array of points;
# with --argjson doc true, as plan.json's document {points: [...]}.
# ckey: the key of the point's ceiling in aggregate.json's ceiling (rw, or
# rw-nN for N ranks). Used by results.sh plan_json, pipeline.sh plan_doc.
[split("\n")[] | select(length > 0) | split("\t")
| {point: .[0], kind: .[1], rw: .[2], backend: .[3], tensor: (.[4] | tonumber),
   block: (.[5] | tonumber), qd: (.[6] | tonumber), submit: .[7], window: .[8],
   threads: (.[9] | tonumber), iodepth: (.[10] | tonumber),
   ranks: (.[11] // "1" | tonumber)}
| . + {ckey: (if .ranks == 1 then .rw else "\(.rw)-n\(.ranks)" end)}]
| if $ARGS.named.doc == true then {points: .} else . end
