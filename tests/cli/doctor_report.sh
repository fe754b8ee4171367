# cclforge doctor --report: one host's topology drawn from a sysfs fixture of a
# two-socket host with 8 GPUs and 4 NICs and from NCCL's topology XML of the
# same machine; a host without GPUs; the hosts of a real gather (namespace
# hosts under srun's environment, and mpirun) with one host that differs; and
# 1,024 saved hosts through the library (tests/unit/test_doctor_report.c).
# Each page is opened by Debian's headless Chromium with the network off and
# checked from its DOM, its pixels and its console (tests/support/html_page.py).
# CCLFORGE_DOCS_SHOTS=DIR also keeps the screenshots docs/doctor.md shows
# (doctor-topology.png, doctor-topology-xml.png, doctor-hosts.png,
# doctor-hosts-1024.png: CCLFORGE_DOCS_SHOTS=docs remakes them).
. "$(dirname "$0")/lib.sh"
PAGE=$CCLFORGE_SOURCE_DIR/tests/support/html_page.py
command -v chromium >/dev/null || t_skip "no chromium (scripts/deps.sh installs it)"
D=("$CCLFORGE" doctor --no-python --no-nvidia)
SHOTS=${CCLFORGE_DOCS_SHOTS:-}
# page NAME FILE.html [W,H]: render it; sets P to the prefix of its .dom/.png
page() {
    P=$T_TMP/$1
    if python3 "$PAGE" render "$2" "$P" "${3:-1500,1300}" 2>"$T_TMP/$1.err"; then ok "$1: Chromium opened it, nothing on the console"
    else bad "$1: Chromium failed or the page logged to the console: $(cat "$T_TMP/$1.err")"; fi
    python3 "$PAGE" selfcontained "$2" 2>"$T_TMP/$1.err" && ok "$1: references nothing outside itself" || bad "$1: $(cat "$T_TMP/$1.err")"
    case " topology topology-xml hosts hosts-1024 " in
    *" $1 "*) [ -n "$SHOTS" ] && [ -f "$P.png" ] && cp "$P.png" "$SHOTS/doctor-$1.png" ;;
    esac
    return 0
}
dom() { python3 "$PAGE" eval "$P.dom" "$1" && ok "$2" || bad "$2 (dom: $1)"; }
pixels() { python3 "$PAGE" pixels "$P.png" "$1"; }
# the background colour of the first element EXPR finds, as RRGGBB
bg() { python3 "$PAGE" print "$P.dom" "__import__('re').search(r'background:#([0-9a-f]{6})', ($1)[0]['attrs']['style']).group(1)"; }

# ---- the checks themselves can fail ----
printf '<!doctype html><html><body><img src="http://192.0.2.1/x.png"><script>console.error("boom")</script></body></html>\n' >"$T_TMP/ext.html"
python3 "$PAGE" selfcontained "$T_TMP/ext.html" 2>/dev/null && bad "an <img> from the network passes the self-containment check" || ok "the self-containment check fails a page that loads an image"
python3 "$PAGE" render "$T_TMP/ext.html" "$T_TMP/ext" 2>/dev/null && bad "a console error passes" || ok "the browser check fails a page that logs to the console"

# two sockets, 8 GPUs, 4 NICs (sysfs shapes as the kernel lays them out)
. "$CCLFORGE_SOURCE_DIR/tests/fixtures/topology_fixture.sh"
# the same machine as NCCL dumps it (NCCL_TOPO_DUMP_FILE): switches under each
# CPU, GPUs with their NVLinks to the NVSwitch, NICs with their net devices
gen_xml() { # FILE
    local g=0
    xgpu() { printf '        <pci busid="%s" class="0x030200" vendor="0x10de" device="0x2330" subsystem_vendor="0x10de" subsystem_device="0x16c1" link_speed="32.0 GT/s PCIe" link_width="16">\n          <gpu dev="%d" sm="90" rank="%d" gdr="1">\n            <nvlink target="0000:00:00.0" count="18" tclass="0x068000"/>\n          </gpu>\n        </pci>\n' "$1" $g $g; g=$((g + 1)); }
    xnic() { printf '        <pci busid="%s" class="0x020700" vendor="0x15b3" device="0x1021" link_speed="32.0 GT/s PCIe" link_width="16">\n          <nic>\n            <net name="%s" dev="%s" speed="400000" port="1" latency="0.000000" guid="0x%s" maxconn="131072" gdr="1"/>\n          </nic>\n        </pci>\n' "$1" "$2" "$3" "$3"; }
    sw() { printf '      <pci busid="%s" class="0x060400" vendor="0x1000" device="0xc030" link_speed="32.0 GT/s PCIe" link_width="16">\n' "$1"; }
    {
        echo '<system version="1">'
        echo '  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">'
        sw 0000:01:00.0; xgpu 0000:03:00.0; xgpu 0000:04:00.0; xnic 0000:05:00.0 mlx5_0 0; echo '      </pci>'
        sw 0000:11:00.0; xgpu 0000:13:00.0; xgpu 0000:14:00.0; xnic 0000:15:00.0 mlx5_1 1; echo '      </pci>'
        echo '  </cpu>'
        echo '  <cpu numaid="1" affinity="ffff0000" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="143">'
        sw 0000:81:00.0; xgpu 0000:83:00.0; xgpu 0000:84:00.0; xnic 0000:85:00.0 mlx5_2 2; echo '      </pci>'
        sw 0000:91:00.0; sw 0000:93:00.0; xgpu 0000:95:00.0; xgpu 0000:96:00.0; echo '      </pci>'
        xnic 0000:97:00.0 mlx5_3 3; echo '      </pci>'
        echo '  </cpu>'
        echo '</system>'
    } >"$1"
}

# ---- the topology from sysfs ----
FX=$T_TMP/fx
topology_fixture "$FX"
run "${D[@]}" --sysfs-root "$FX" --report "$T_TMP/topo.html" --json
[ -s "$T_TMP/topo.html" ] && ok "--report writes the file alongside --json" || bad "no report written"
expect_json 'd["schema"]=="cclforge.doctor/1"' "stdout is still the JSON report"
expect_err "report written to .*topo.html" "stderr says where the report is"
page topology "$T_TMP/topo.html"
dom 'len(q("g", data_kind="gpu"))==8 and len(q("g", data_kind="nic"))==4 and len(q("g", data_kind="numa"))==2' "8 GPUs, 4 NICs and 2 NUMA nodes are drawn"
dom 'len(q("g", data_kind="root"))==4 and len(q("g", data_kind="switch"))==5 and len(q(data_link="smp"))==1' "4 root complexes, 5 switches and the socket interconnect are drawn"
dom 'q("p", id="counts")[0]["attrs"]["data-gpus"]=="8"' "the counts say 8 GPUs"
dom 'q("td", data_a="GPU0", data_b="GPU1")[0]["attrs"]["data-cls"]=="PIX" and q("td", data_a="GPU0", data_b="GPU2")[0]["attrs"]["data-cls"]=="NODE" and q("td", data_a="GPU0", data_b="GPU4")[0]["attrs"]["data-cls"]=="SYS"' "GPU x GPU: PIX behind one switch, NODE across root complexes, SYS across sockets"
dom 'q("td", data_a="GPU0", data_b="mlx5_0,ibp5s0")[0]["attrs"]["data-cls"]=="PIX" and q("td", data_a="GPU6", data_b="mlx5_3,ibp151s0")[0]["attrs"]["data-cls"]=="PXB" and q("td", data_a="GPU6", data_b="GPU6")[0]["attrs"]["data-cls"]=="X"' "GPU x NIC: PIX, PXB through two switches; X on the diagonal"
dom 'len(q("td", data_cls="SYS"))==48' "every cross-socket pair is SYS: 4x4 GPU pairs both ways, 4x2 GPU-NIC pairs from each side"
SYS_BG=$(bg 'q("td", data_cls="SYS")') PIX_BG=$(bg 'q("td", data_cls="PIX")')
[ "$SYS_BG" = 00224e ] && ok "SYS is the far end of the scale (dark)" || bad "SYS is drawn #$SYS_BG"
n=$(pixels "$SYS_BG"); [ "$n" -gt 20000 ] && ok "the screenshot shows the SYS cells ($n pixels)" || bad "only $n SYS-coloured pixels"
n=$(pixels "$PIX_BG"); [ "$n" -gt 3000 ] && ok "and the PIX cells, lighter ($n pixels of #$PIX_BG)" || bad "only $n PIX-coloured pixels"
echo "# loaded in $(python3 "$PAGE" print "$P.dom" 'root["attrs"]["data-load-ms"]') ms (bench/reports.sh measures it)"

# ---- remade after the run from the saved JSON (cclforge report) ----
printf '%s\n' "$OUT" > "$T_TMP/saved.json"
run "$CCLFORGE" report -o "$T_TMP/remade.html" "$T_TMP/saved.json"
expect_rc 0 "cclforge report remakes a host's topology from its saved doctor --json"
gpus() { grep -o '<g[^>]*data-kind="gpu"' "$1" | wc -l; }
[ "$(gpus "$T_TMP/remade.html")" = 8 ] && [ "$(gpus "$T_TMP/topo.html")" = 8 ] && ok "the remade page draws the same 8 GPUs" || bad "the remade page differs: $(gpus "$T_TMP/remade.html") GPUs against $(gpus "$T_TMP/topo.html")"
python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); d["host"]["hostname"]="other-host"; json.dump(d, open(sys.argv[2], "w"))' "$T_TMP/saved.json" "$T_TMP/other.json"
run "$CCLFORGE" report -o "$T_TMP/two.html" "$T_TMP/saved.json" "$T_TMP/other.json"
expect_rc 0 "two hosts' saved documents make a hosts report"
grep -q 'id="summary"[^>]*data-hosts="2"' "$T_TMP/two.html" && ok "with both hosts in it" || bad "the hosts report does not hold two hosts"
echo '{"schema":"cclforge.doctor/1"}' > "$T_TMP/empty.json"
run "$CCLFORGE" report -o "$T_TMP/no.html" "$T_TMP/saved.json" "$T_TMP/empty.json"
expect_rc 2 "a document without a host's facts is refused"
expect_err 'report 2 is not a host.s survey: it lacks "host"' "naming the document and what it lacks"
[ ! -e "$T_TMP/no.html" ] && ok "and nothing is written" || bad "a report was written from a document that is no survey"
# ---- a saved document holding what no writer writes is refused, the field named ----
DOCS=$CCLFORGE_SOURCE_DIR/tests/fixtures/documents
refused() { # DOC PYTHON-EDIT FIELD-PATTERN WHAT
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); exec(sys.argv[2]); json.dump(d, open(sys.argv[3], "w"))' "$1" "$2" "$T_TMP/bad.json"
    rm -f "$T_TMP/bad.html"
    run "$CCLFORGE" report -o "$T_TMP/bad.html" "$T_TMP/bad.json"
    expect_rc 2 "$4: refused (exit 2)"
    expect_err "$3" "$4: the field is named"
    [ ! -e "$T_TMP/bad.html" ] && ok "$4: no page" || bad "$4: a page was written"
}
refused "$DOCS/doctor-topology.json" 'del d["summary"]' '"summary" is missing' "a host's report without its summary"
refused "$DOCS/doctor-topology.json" 'd["summary"]["errors"] = 0' '"summary.errors" is 0, but the document holds 1' "a summary that does not count the findings"
refused "$DOCS/doctor-topology.json" 'd["findings"][0]["severity"] = "passed"' "findings\[0\]\.severity is 'passed'" "a finding of no severity"
refused "$DOCS/doctor-gather-hosts.json" 'd["world"] = -1' '"world" is -1' "a gather of -1 ranks"
refused "$DOCS/doctor-gather-hosts.json" 'd["hosts"][1]["ranks"] = [99999999]' '"hosts\[1\]\.ranks" holds a value that is no rank of a world of 3' "a rank outside the world"
refused "$DOCS/doctor-gather-hosts.json" 'd["differences"][0]["groups"][1]["hosts"] = ["node99999999"]' "names 'node99999999', no host of the document" "a difference naming a host the gather never heard"
refused "$DOCS/doctor-gather-hosts.json" 'del d["hosts"][0]["report"]' '"hosts\[0\]\.report" is missing' "a surveyed host without its report"

# ---- the same machine from NCCL's topology XML ----
gen_xml "$T_TMP/topo.xml"
run "${D[@]}" --sysfs-root "$FX" --report "$T_TMP/xml.html" --topo-file "$T_TMP/topo.xml" --quick
[ -s "$T_TMP/xml.html" ] && grep -q "NCCL&#39;s topology XML" "$T_TMP/xml.html" && ok "--topo-file: drawn from the XML" || bad "the XML was not drawn"
page topology-xml "$T_TMP/xml.html"
dom 'len(q("g", data_kind="gpu"))==8 and len(q("g", data_kind="nic"))==4 and len(q("g", data_kind="numa"))==2 and len(q("g", data_kind="nvswitch"))==1' "8 GPUs, 4 NICs, 2 NUMA nodes and the NVSwitch"
dom 'len(q("g", data_link="nvlink", data_count="18"))==8' "each GPU's 18 NVLinks to the NVSwitch"
dom 'q("td", data_a="GPU0", data_b="GPU7")[0]["attrs"]["data-cls"]=="NV18" and len(q("td", data_cls="NV18"))==56' "every GPU pair is NV18 over the NVSwitch"
dom 'q("td", data_a="GPU0", data_b="mlx5_0")[0]["attrs"]["data-cls"]=="PIX" and q("td", data_a="GPU6", data_b="mlx5_3")[0]["attrs"]["data-cls"]=="PXB" and q("td", data_a="GPU0", data_b="mlx5_1")[0]["attrs"]["data-cls"]=="PHB" and q("td", data_a="GPU0", data_b="mlx5_2")[0]["attrs"]["data-cls"]=="SYS"' "GPU x NIC from the XML: PIX, PXB, PHB (NCCL's reading of NODE), SYS"
dom 'any("reads PHB here" in e["text"] for e in q("p"))' "the page says the XML cannot tell NODE from PHB"
[ "$(pixels "$(bg 'q("td", data_cls="NV18")')")" -gt 50000 ] && ok "the NVLink cells are drawn" || bad "no NV18-coloured pixels"
run env NCCL_TOPO_FILE="$T_TMP/topo.xml" "${D[@]}" --sysfs-root "$FX" --report "$T_TMP/env.html" --quick
grep -q 'data-kind="nvswitch"' "$T_TMP/env.html" && ok "NCCL_TOPO_FILE is drawn without --topo-file" || bad "NCCL_TOPO_FILE was not used"
printf '<system version="1"><cpu numaid="0"/></system>\n' >"$T_TMP/empty.xml"
run env NCCL_TOPO_FILE="$T_TMP/topo.xml" NCCL_TOPO_DUMP_FILE="$T_TMP/topo.xml" "${D[@]}" --sysfs-root "$FX" --report "$T_TMP/env.html" --topo-file "$T_TMP/empty.xml" --quick
grep -q 'data-gpus="0"' "$T_TMP/env.html" && ok "--topo-file wins over NCCL_TOPO_FILE" || bad "--topo-file did not win"
run env NCCL_TOPO_DUMP_FILE="$T_TMP/topo.xml" "${D[@]}" --sysfs-root "$FX" --report "$T_TMP/env.html" --quick
grep -q 'data-kind="nvswitch"' "$T_TMP/env.html" && ok "NCCL_TOPO_DUMP_FILE, once it exists, is drawn" || bad "NCCL_TOPO_DUMP_FILE was not used"
run env NCCL_TOPO_DUMP_FILE="$T_TMP/not-yet.xml" "${D[@]}" --sysfs-root "$FX" --report "$T_TMP/env.html" --quick
grep -q 'data-kind="root"' "$T_TMP/env.html" && ok "a dump NCCL has not written yet: sysfs is drawn" || bad "a missing dump file was not ignored"
printf '<system version="1">\n\t<cpu numaid="0"/>\n</system>\n' >"$T_TMP/tab.xml"
rm -f "$T_TMP/bad.html"
run env NCCL_TOPO_FILE="$T_TMP/tab.xml" "${D[@]}" --sysfs-root "$FX" --report "$T_TMP/bad.html" --quick
expect_rc 2 "an XML NCCL cannot read is a usage error"
expect_err "NCCL_TOPO_FILE: NCCL topology .*tab.xml: a tab between elements .*byte" "naming the variable, the file and the byte"
[ ! -e "$T_TMP/bad.html" ] && ok "and no report is left behind" || bad "a report was written anyway"
run "${D[@]}" --topo-file "$T_TMP/topo.xml"
expect_rc 2 "--topo-file without --report is refused"
# names from the XML are text
sed 's/name="mlx5_1"/name="<img src=x onerror=alert(1)>"/' "$T_TMP/topo.xml" >"$T_TMP/evil.xml"
run "${D[@]}" --sysfs-root "$FX" --report "$T_TMP/evil.html" --topo-file "$T_TMP/evil.xml" --quick
page topology-escaped "$T_TMP/evil.html"
dom 'not q("img") and any(e["attrs"].get("data-label")=="<img src=x onerror=alert(1)>" for e in q("g"))' "a NIC named '<img ...>' is text, not an element"

# ---- an AMD host: KFD's XGMI links drawn between the GPUs its nodes name ----
# tests/fixtures/kfd_fixtures.sh's KFD (nodes 1 and 2 joined by XGMI, node 3 with a
# PCIe peer path only; location_ids naming buses 0c, 22, 38) and the PCI functions
# those name, as sysfs lays them out: two GPUs on one root complex, one on another
AMD=$T_TMP/amd
bash "$CCLFORGE_SOURCE_DIR/tests/fixtures/kfd_fixtures.sh" "$AMD" >/dev/null || bad "kfd fixtures failed"
amd_gpu() { # PATH numa
    local d=$AMD/sys/devices/$1
    mkdir -p "$d" "$AMD/sys/bus/pci/devices"
    echo 0x120000 >"$d/class"; echo 0x1002 >"$d/vendor"; echo 0x74a1 >"$d/device"; echo "$2" >"$d/numa_node"
    echo "32.0 GT/s PCIe" >"$d/current_link_speed"; echo 16 >"$d/current_link_width"
    ln -s "../../../devices/$1" "$AMD/sys/bus/pci/devices/$(basename "$1")"
}
amd_gpu pci0000:00/0000:00:01.0/0000:0c:00.0 0
amd_gpu pci0000:00/0000:00:02.0/0000:22:00.0 0
amd_gpu pci0000:30/0000:30:01.0/0000:38:00.0 1
run "${D[@]}" --sysfs-root "$AMD" --report "$T_TMP/amd.html" --json --quick
expect_json '[g["bdf"] for g in d["fabric"]["kfd_gpus"]] == ["0000:0c:00.0", "0000:22:00.0", "0000:38:00.0"]' "each KFD node's PCI function, from its domain and location_id"
page amd "$T_TMP/amd.html"
dom 'len(q("g", data_kind="gpu"))==3 and [(x["attrs"]["data-a"], x["attrs"]["data-b"], x["attrs"]["data-type"]) for x in q("g", data_link="nvlink")]==[("0000:0c:00.0", "0000:22:00.0", "XGMI")]' "the XGMI link between the hive's two GPUs is drawn, and only it"
dom 'q("td", data_a="GPU0", data_b="GPU1")[0]["attrs"]["data-cls"]=="XGMI" and q("td", data_a="GPU0", data_b="GPU2")[0]["attrs"]["data-cls"]=="SYS"' "GPU x GPU: XGMI within the hive, SYS to the GPU on the other socket"
grep -q 'KFD node1 - node3: PCIe, weight 40 (p2p_links)' "$T_TMP/amd.html" && ok "the PCIe peer path is listed, not drawn as a link" || bad "the PCIe peer path is missing from the page"

# ---- a host without GPUs (this machine's own sysfs) ----
run "${D[@]}" --report "$T_TMP/here.html" --quick
[ -s "$T_TMP/here.html" ] && ok "a report for this host" || bad "no report for this host"
if grep -q 'data-gpus="0"' "$T_TMP/here.html"; then
    page topology-nogpu "$T_TMP/here.html" 1200,700
    dom 'q("p", id="nogpu") and "no GPUs" in q("p", id="nogpu")[0]["text"]' "it says plainly there are no GPUs"
    dom 'q("svg") or q("p", id="empty")' "and draws what there is (or says there is nothing)"
else
    echo "# this host has GPUs: the no-GPU page is not checked here"
fi

# ---- hosts: saved documents through the library (1,024 hosts; a host named <script>) ----
UNIT=${CCLFORGE_BINARY_DIR:?}/tests/test_doctor_report
if [ -x "$UNIT" ]; then
    mkdir -p "$T_TMP/saved"
    CCLFORGE_REPORT_OUT=$T_TMP/saved "$UNIT" >"$T_TMP/unit.out" 2>&1 && ok "the library's hosts reports are made" || bad "test_doctor_report failed: $(tail -5 "$T_TMP/unit.out")"
    size=$(stat -c %s "$T_TMP/saved/hosts-1024.html")
    [ "$size" -lt 5242880 ] && ok "1,024 hosts: $size bytes, under 5 MB" || bad "1,024 hosts: $size bytes"
    page hosts-1024 "$T_TMP/saved/hosts-1024.html" 1300,900
    echo "# 1,024 hosts loaded in $(python3 "$PAGE" print "$P.dom" 'root["attrs"]["data-load-ms"]') ms (bench/reports.sh measures it)"
    dom 'len(q("tr", class_="hostgroup"))==3 and q("tr", class_="hostgroup")[0]["attrs"]["data-count"]=="1022"' "three rows: 1,022 hosts alike and the two odd ones"
    dom 'any(e["attrs"].get("data-diff")=="NCCL" and e["attrs"]["class"]=="odd" for e in q("td")) and q("tr", class_="hostgroup", data_hosts="node0003")' "the odd host's NCCL is marked, the host named"
    page hosts-escaped "$T_TMP/saved/hosts-escape.html" 1300,900
    dom 'not any("alert" in e["text"] for e in q("script") if e["attrs"].get("type")!="application/json") and any(e["text"].strip()=="<script>alert(1)</script>" for e in q("div", class_="hosts"))' "a host named <script> is text"
    n=$(pixels 00224e); [ "$n" -gt 2000 ] && ok "the odd value is marked in the picture ($n pixels)" || bad "the odd value is not marked ($n pixels)"
else
    bad "no $UNIT: build the unit tests"
fi

# ---- hosts: a real gather with --report ----
G=("${D[@]}" --gather --quick)
if command -v mpirun >/dev/null; then
    MPI=(mpirun --oversubscribe)
    [ "$(id -u)" = 0 ] && MPI=(mpirun --allow-run-as-root --oversubscribe)
    run timeout 120 "${MPI[@]}" -n 2 "${G[@]}" --timeout 60 --report "$T_TMP/mpi.html"
    [ -s "$T_TMP/mpi.html" ] && grep -q 'data-hosts="1"' "$T_TMP/mpi.html" && ok "mpirun -n 2 doctor --gather --report: rank 0 writes one host's report" || bad "no gather report under mpirun (rc $RC): $ERR"
else
    echo "# mpirun not installed: the Open MPI case did not run"
fi
if ! t_netns_usable cfhr; then
    t_skip_part "not root or no network namespaces: the multi-host gather did not run"
    t_end; exit $?
fi
trap 't_netns_remove cfhr; [ -n "${CCLFORGE_KEEP_TMP:-}" ] || rm -rf "$T_TMP"' EXIT
T_NETNS_NAMES=(cfhr-h0 cfhr-h1 cfhr-h2 cfhr-h3)
t_netns_remove cfhr # what a killed run left
t_netns_switch cfhr 10.45.0 cfhr-h0 cfhr-h1 cfhr-h2 cfhr-h3
onhost() { # onhost N CMD...: rank N on host N, as srun starts it
    local n=$1; shift
    t_on_host cfhr "$n" env SLURM_PROCID=$n SLURM_NTASKS=4 SLURM_LOCALID=0 SLURM_STEP_NODELIST='cfhr-h[0-3]' \
        SLURM_JOB_ID=4343 SLURM_STEP_ID=0 "$@"
}
pids=()
for n in 1 2 3; do
    if [ $n = 2 ]; then onhost $n env NCCL_SOCKET_IFNAME=cfhr-b "${G[@]}" --timeout 60 >/dev/null 2>&1 &
    else onhost $n "${G[@]}" --timeout 60 >/dev/null 2>&1 &
    fi
    pids+=($!)
done
run onhost 0 "${G[@]}" --timeout 60 --report "$T_TMP/gather.html"
for p in "${pids[@]}"; do wait "$p"; done
[ -s "$T_TMP/gather.html" ] && ok "rank 0 writes the gather's report" || bad "no gather report (rc $RC): $ERR"
page hosts "$T_TMP/gather.html" 1300,760
dom 'q("p", id="summary")[0]["attrs"]["data-hosts"]=="4"' "four hosts in the report"
dom 'q("tr", class_="hostgroup")[0]["attrs"]["data-hosts"]=="cfhr-h[0-1,3]" and q("tr", class_="hostgroup")[0]["attrs"]["data-count"]=="3"' "the three hosts alike share a row, as a hostlist"
dom 'q("tr", class_="hostgroup", data_hosts="cfhr-h2")[0]["attrs"]["data-odd"]=="1" and any(e["attrs"].get("data-diff")=="NCCL_SOCKET_IFNAME" and e["attrs"]["class"]=="odd" and e["attrs"]["data-value"]=="cfhr-b" for e in q("td"))' "the odd host's NCCL_SOCKET_IFNAME is marked with its value"
dom 'q("tr", class_="diffgroup", data_diff="NCCL_SOCKET_IFNAME", data_odd="1")[0]["attrs"]["data-hosts"]=="cfhr-h2"' "and the difference names the host that has it"
n=$(pixels 00224e); [ "$n" -gt 1000 ] && ok "the marked value shows in the picture ($n pixels)" || bad "the marked value is not in the picture ($n pixels)"
t_end
