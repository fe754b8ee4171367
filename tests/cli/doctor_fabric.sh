# cclforge doctor: NCCL's effective configuration (environment, NCCL_CONF_FILE,
# ~/.nccl.conf and /etc/nccl.conf placed in a private mount namespace), the real
# libnccl's own parameter names, and the fabric from a fixture sysfs tree
# (tests/fixtures/fabric_fixtures.sh).
. "$(dirname "$0")/lib.sh"
FX=$T_TMP/fx
bash "$CCLFORGE_SOURCE_DIR/tests/fixtures/fabric_fixtures.sh" "$FX" >/dev/null || { echo "fixtures failed"; exit 1; }
D=("$CCLFORGE" doctor --no-python --no-nvidia)
HAVE_NCCL=0
t_find_nccl && HAVE_NCCL=1

# ---- the fabric of the fixture ----
run env -u NCCL_IB_HCA NCCL_IB_GID_INDEX=0 "${D[@]}" --sysfs-root "$FX" --json
expect_rc 1 "HCAs without /dev/infiniband are an error"
expect_json '{(p["a"],p["b"]):p["cls"] for p in d["fabric"]["pairs"]} == {("0000:03:00.0","0000:04:00.0"):"PIX",("0000:03:00.0","0000:81:00.0"):"SYS",("0000:81:00.0","0000:04:00.0"):"SYS"}' "topology classes as nvidia-smi topo -m: PIX behind one switch, SYS across NUMA"
expect_json 'any(f["id"]=="no-uverbs" for f in d["findings"])' "no verbs device nodes: NCCL falls back to sockets"
expect_json 'any(f["id"]=="ib-port-down" and "mlx5_0:2 DOWN" in f["why"] for f in d["findings"])' "the port that is down is named"
expect_json 'any(f["id"]=="pcie-width-downtrained" and "x8 of x16" in f["why"] for f in d["findings"])' "a NIC link trained at x8 of x16"
expect_json 'any(f["id"]=="pcie-speed-downtrained" and f["severity"]=="info" for f in d["findings"])' "a GPU's idle link speed is only a note"
expect_json 'any(f["id"]=="acs-redirect" and f["subject"]=="0000:02:01.0" for f in d["findings"])' "ACS redirect on the switch port is a warning"
expect_json 'any(f["id"]=="acs-unreadable" and f["subject"]=="0000:02:00.0" for f in d["findings"])' "a 64-byte config space says: needs root"
expect_json 'any(f["id"]=="iommu-translating" and "DMA-FQ" in f["why"] for f in d["findings"])' "an IOMMU group translating DMA"
expect_json 'any(f["id"]=="gpu-nic-far" and f["subject"]=="0000:81:00.0" for f in d["findings"])' "a GPU with no NIC near it"
expect_json 'any(f["id"]=="nccl-gid-index-link-local" and "NCCL_IB_GID_INDEX=3" in f["remedy"] for f in d["findings"])' "GID 0 is link-local; NCCL's own pick (3, RoCE v2 IPv4) is suggested"
mkdir -p "$FX/dev/infiniband" && : >"$FX/dev/infiniband/uverbs0"
run env NCCL_IB_HCA=mlx5_0:1 NCCL_IB_GID_INDEX=3 "${D[@]}" --sysfs-root "$FX" --json
expect_json 'not any(f["id"] in ("no-uverbs","ib-port-down","nccl-gid-index-link-local") for f in d["findings"])' "NCCL_IB_HCA=mlx5_0:1 and GID 3: nothing to say about them"
run env NCCL_IB_HCA=mlx5_0:2 "${D[@]}" --sysfs-root "$FX" --json
expect_json 'any(f["id"]=="ib-no-active-port" and f["severity"]=="error" for f in d["findings"])' "only a down port selected: NCCL silently uses sockets"
run env NCCL_IB_HCA==mlx5 "${D[@]}" --sysfs-root "$FX" --json
expect_json 'any(f["id"]=="nccl-ib-hca-none" for f in d["findings"])' "'=mlx5' is an exact name: no HCA matches"
run env NCCL_IB_HCA=^mlx5_0:2 "${D[@]}" --sysfs-root "$FX" --json
expect_json 'not any(f["id"] in ("nccl-ib-hca-none","ib-no-active-port","ib-port-down") for f in d["findings"])' "'^mlx5_0:2' excludes the down port"
run "${D[@]}" --sysfs-root "$FX" --json --save "$T_TMP/fx.json"
expect_json 'd["fabric"]["ib"][0]["ports"][0]["gids"][3]["type"] == "RoCE v2"' "the GID table and types are in the JSON"
run "$CCLFORGE" doctor compare "$T_TMP/fx.json" "$T_TMP/fx.json"
expect_rc 0 "a report with a fabric loads back for compare"

# ---- AMD: KFD io_links and p2p_links (tests/fixtures/kfd_fixtures.sh) ----
KFD=$T_TMP/kfd
bash "$CCLFORGE_SOURCE_DIR/tests/fixtures/kfd_fixtures.sh" "$KFD" >/dev/null || { echo "kfd fixtures failed"; exit 1; }
run "${D[@]}" --sysfs-root "$KFD" --json --save "$T_TMP/kfd.json"
expect_json '[(g["node"],g["hive_id"]) for g in d["fabric"]["kfd_gpus"]] == [(1,"5163471638593843241"),(2,"5163471638593843241"),(3,None)]' "three GPU nodes (the CPU node is not one), the 64-bit hive id exact"
expect_json '[(l["from"],l["to"],l["type"],l["weight"],l["table"]) for l in d["fabric"]["kfd_links"]] == [(1,2,"XGMI",15,"io_links"),(1,3,"PCIe",40,"p2p_links"),(2,3,"PCIe",40,"p2p_links")]' "XGMI from io_links, PCIe peer paths from p2p_links, each pair once, no GPU-CPU link"
expect_json '[l["max_bandwidth"] for l in d["fabric"]["kfd_links"]] == [128000, 64000, 64000] and [g["bdf"] for g in d["fabric"]["kfd_gpus"]] == ["0000:0c:00.0", "0000:22:00.0", "0000:38:00.0"]' "each link's bandwidth (MB/s) and each GPU's PCI function from its node's domain and location_id"
expect_json 'len(d["gpus"])==3 and all(g["arch"]=="gfx942" for g in d["gpus"])' "the same nodes are the survey's GPUs"
expect_json '[f["subject"] for f in d["findings"] if f["id"]=="kfd-xgmi-missing"] == ["KFD node3 gfx942"]' "only the GPU outside the hive is named"
expect_json 'any(f["id"]=="kfd-xgmi-missing" and f["severity"]=="warning" and "node1, node2 are joined by XGMI" in f["why"] and "node1 over PCIe (weight 40, p2p_links)" in f["why"] for f in d["findings"])' "with the hive and the PCIe paths it falls back to"
run "$CCLFORGE" doctor --survey "$T_TMP/kfd.json" --no-python --no-nvidia --json
expect_json 'd["fabric"]["kfd_links"][0]["type"]=="XGMI" and d["fabric"]["kfd_gpus"][0]["hive_id"]=="5163471638593843241" and any(f["id"]=="kfd-xgmi-missing" for f in d["findings"])' "the links load back from a saved report, with the same finding"
run "${D[@]}" --sysfs-root "$KFD" --verbose
expect_out "KFD node1 - node2: XGMI, weight 15 \(io_links\)" "the text report lists the links"
# node3 joins by XGMI (an io_link of type 11 to node2): nothing to say
K3=$KFD/sys/class/kfd/kfd/topology/nodes/3
rm -rf "$K3/p2p_links"/*
mkdir -p "$K3/io_links/1"
sed 's/^node_from 1$/node_from 3/' "$KFD/sys/class/kfd/kfd/topology/nodes/1/io_links/1/properties" >"$K3/io_links/1/properties"
run "${D[@]}" --sysfs-root "$KFD" --json
expect_json 'not any(f["id"]=="kfd-xgmi-missing" for f in d["findings"]) and ("XGMI" in [l["type"] for l in d["fabric"]["kfd_links"] if (l["from"],l["to"])==(2,3)])' "once node3 has an XGMI link it is no longer named"

# ---- NCCL_SOCKET_IFNAME against real interfaces (this network namespace) ----
run env NCCL_SOCKET_IFNAME=cffb-none "${D[@]}" --json
expect_json 'any(f["id"]=="nccl-ifname-none" and f["severity"]=="error" for f in d["findings"])' "an interface that does not exist is an error"
run env NCCL_SOCKET_IFNAME==lo "${D[@]}" --json
expect_json 'any(f["id"]=="nccl-ifname-loopback" for f in d["findings"])' "'=lo' selects only loopback: a warning"
run env NCCL_SOCKET_IFNAME=^lo "${D[@]}" --json
expect_json 'not any(f["id"].startswith("nccl-ifname") for f in d["findings"]) or not any(i["running"] and not i["loopback"] and i["addrs"] for i in d["fabric"]["ifs"])' "'^lo' uses every other running interface, silently"
run env NCCL_SOCKET_IFNAME=e "${D[@]}" --json
expect_json 'any(f["id"]=="nccl-ifname-ignored" for f in d["findings"])' "a one-character value is ignored by NCCL"

# ---- NCCL's configuration: names from the real libnccl ----
if [ "$HAVE_NCCL" = 1 ]; then
    run env NCCL_SOCKET_IFNAM=eth0 NCCL_DEBUG=INFO NCCL_HOME=/opt/nccl NCCL_API_TOKEN=s3cr3t NCCL_TESTS_SPLIT_MASK=0x7 "${D[@]}" --json
    expect_json 'any(f["id"]=="nccl-var-unknown" and "did you mean NCCL_SOCKET_IFNAME" in f["why"] for f in d["findings"])' "a typo gets the closest real name from libnccl"
    expect_json 'any(f["id"]=="nccl-debug-setting" and "environment" in f["why"] for f in d["findings"])' "NCCL_DEBUG=INFO is a warning naming its source"
    expect_json 'any(f["id"]=="nccl-var-foreign" and f["subject"]=="NCCL_HOME" for f in d["findings"])' "NCCL_HOME is someone else's variable"
    expect_json 'any(f["id"]=="nccl-var-foreign" and f["subject"]=="NCCL_TESTS_SPLIT_MASK" and "nccl-tests" in f["why"] for f in d["findings"]) and not any(f["id"]=="nccl-var-unknown" and f["subject"]=="NCCL_TESTS_SPLIT_MASK" for f in d["findings"])' "nccl-tests' own variables are nccl-tests', not unknown to NCCL"
    expect_json '[s for s in d["nccl_config"]["settings"] if s["name"]=="NCCL_API_TOKEN"][0]["value"] is None' "a secret-like value is not recorded"
    printf '%s' "$OUT" | grep -q s3cr3t && bad "the secret appears in the report" || ok "the secret appears nowhere in the report"
    run env NCCL_DEBUG=WARN NCCL_ALGO=Ring "${D[@]}" --json
    expect_json 'not any(f["id"]=="nccl-debug-setting" and f["subject"]=="NCCL_DEBUG" for f in d["findings"]) and any(f["subject"]=="NCCL_ALGO" for f in d["findings"])' "NCCL_DEBUG=WARN is benign, NCCL_ALGO is a workaround"
    run env NCCL_NET_PLUGIN=cffbabsent "${D[@]}" --json
    expect_json 'any(f["id"]=="nccl-plugin-missing" and "libnccl-net-cffbabsent.so" in f["why"] for f in d["findings"])' "NCCL_NET_PLUGIN=NAME tries NAME and libnccl-net-NAME.so"
    printf '<?xml version="1.0"?>\n<system version="1">\n</system>\n' >"$T_TMP/topo.xml"
    run env NCCL_TOPO_FILE="$T_TMP/topo.xml" "${D[@]}" --json
    expect_json 'any(f["id"]=="nccl-topo-file" and "declaration" in f["why"] for f in d["findings"])' "an XML declaration NCCL's reader refuses"
    printf '<system version="1">\n  <cpu numaid="0"/>\n</system>\n' >"$T_TMP/topo.xml"
    run env NCCL_TOPO_FILE="$T_TMP/topo.xml" "${D[@]}" --json
    expect_json 'not any(f["id"]=="nccl-topo-file" for f in d["findings"])' "a topology NCCL reads is fine"
fi

# ---- the configuration files, at their real paths, in a private mount namespace ----
if [ "$(id -u)" = 0 ] && unshare -m true 2>/dev/null; then
    E=$T_TMP/etc; H=$T_TMP/home; mkdir -p "$E" "$H"
    cp /etc/passwd /etc/group "$E/"; [ -f /etc/ld.so.cache ] && cp /etc/ld.so.cache "$E/"
    printf 'NCCL_DEBUG=INFO\nNCCL_SOCKET_NTHREADS=4\nNCCL_IB_HCA = mlx5_0\n#NCCL_ALGO=Tree\nNCCL_SOCKET_NTHREADS=8\n' >"$E/nccl.conf"
    printf 'NCCL_SOCKET_NTHREADS=2\r\n' >"$H/.nccl.conf"
    printf 'NCCL_NSOCKS_PERTHREAD=4\n' >"$T_TMP/user.conf"
    inns() { unshare -m sh -c 'mount --bind "$1" /etc && mount --bind "$2" "$3" && shift 3 && exec "$@"' sh "$E" "$H" "$(getent passwd "$(id -u)" | cut -d: -f6)" "$@"; }
    run inns env NCCL_DEBUG=WARN "${D[@]}" --json
    expect_json '{s["name"]:s["source"] for s in d["nccl_config"]["settings"]}["NCCL_DEBUG"] == "environment"' "the environment beats /etc/nccl.conf"
    expect_json 'any(s["name"]=="NCCL_DEBUG" and s["overridden"]==["/etc/nccl.conf:1 (NCCL_DEBUG=INFO)"] for s in d["nccl_config"]["settings"])' "and the line it overrides is shown"
    expect_json '[s for s in d["nccl_config"]["settings"] if s["name"]=="NCCL_SOCKET_NTHREADS"][0]["value"] == "2\r" and [s for s in d["nccl_config"]["settings"] if s["name"]=="NCCL_SOCKET_NTHREADS"][0]["source"].endswith("/.nccl.conf:1")' "~/.nccl.conf beats /etc/nccl.conf, and keeps its CR"
    expect_json 'any(f["id"]=="nccl-conf-syntax" and "CR LF" in f["why"] for f in d["findings"])' "a CR LF line is a finding"
    expect_json 'any(f["id"]=="nccl-conf-syntax" and f["subject"].endswith("nccl.conf:3") and "white space" in f["why"] for f in d["findings"])' "'NCCL_IB_HCA = mlx5_0' sets a name nothing reads"
    expect_json 'not any(s["name"]=="NCCL_ALGO" for s in d["nccl_config"]["settings"])' "NCCL skips '#' lines"
    expect_json '"/etc/nccl.conf:5 (NCCL_SOCKET_NTHREADS=8)" in [s for s in d["nccl_config"]["settings"] if s["name"]=="NCCL_SOCKET_NTHREADS"][0]["overridden"]' "inside a file the first line for a key wins"
    run inns env NCCL_CONF_FILE="$T_TMP/user.conf" "${D[@]}" --json
    expect_json '[f["role"] for f in d["nccl_config"]["files"]] == ["NCCL_CONF_FILE","/etc/nccl.conf"]' "NCCL_CONF_FILE replaces ~/.nccl.conf, /etc/nccl.conf is still read"
    expect_json '[s for s in d["nccl_config"]["settings"] if s["name"]=="NCCL_SOCKET_NTHREADS"][0]["source"] == "/etc/nccl.conf:2"' "without ~/.nccl.conf the /etc value stands"
    # ---- what NCCL does silently, with the real libnccl as the oracle ----
    # Each case: the variables the real library has after its ncclInitEnv
    # (tests/fixtures/nccl_env_oracle.c) are exactly doctor's settings.
    if [ "$HAVE_NCCL" = 1 ] && cc -o "$T_TMP/oracle" "$CCLFORGE_SOURCE_DIR/tests/fixtures/nccl_env_oracle.c" -ldl 2>"$T_TMP/.cc"; then
        agree() { # what, env assignments...
            local what=$1; shift
            inns env "$@" timeout 60 "$T_TMP/oracle" "$T_NCCL" 2>"$T_TMP/oracle.err" | sed -n "s/^env: //p" | sort >"$T_TMP/oracle.out"
            run inns env "$@" "${D[@]}" --json
            local ours
            ours=$(printf '%s' "$OUT" | python3 -c 'import json,sys; d=json.load(sys.stdin); print("\n".join(sorted(s["name"]+"="+(s["value"] or "") for s in d["nccl_config"]["settings"] if s["name"].startswith("NCCL_"))))')
            if [ -s "$T_TMP/oracle.out" ] && [ "$ours" = "$(cat "$T_TMP/oracle.out")" ]; then ok "$what: doctor's settings are the real libnccl's"
            else bad "$what: doctor's settings differ from libnccl's: $(diff <(printf '%s\n' "$ours") "$T_TMP/oracle.out" | cut -c1-200 | head -12 | tr "\n" " ") $(cat "$T_TMP/oracle.err")"; fi
        }
        printf 'NCCL_SOCKET_NTHREADS=2\n' >"$H/.nccl.conf"
        mkdir -p "$T_TMP/confdir"
        agree "NCCL_CONF_FILE names a directory" NCCL_CONF_FILE="$T_TMP/confdir"
        expect_json 'any(f["id"]=="nccl-conf-not-applied" and f["severity"]=="warning" and "the read fails (EISDIR) and it applies nothing" in f["why"] and "does not read ~/.nccl.conf either" in f["why"] for f in d["findings"])' "a directory NCCL_CONF_FILE is a warning saying what NCCL does"
        expect_json 'not any(f["id"]=="nccl-conf-unreadable" for f in d["findings"]) and d["summary"]["errors"] == 0' "and no longer an error"
        agree "NCCL_CONF_FILE names a missing file" NCCL_CONF_FILE="$T_TMP/absent.conf"
        expect_json 'any(f["id"]=="nccl-conf-not-applied" and "does not exist" in f["why"] and "does not read ~/.nccl.conf either" in f["why"] for f in d["findings"])' "a missing NCCL_CONF_FILE also disables ~/.nccl.conf: said"
        long=$(python3 -c "print('x' * 1100)")
        printf 'NCCL_CONF_FILE=%s\nNCCL_LONGVALUE=%s\nNCCL_%s=1\n' "$T_TMP/user.conf" "$long" "$long" >"$H/.nccl.conf"
        agree "NCCL_CONF_FILE set in a file, a 1,100-character value and name"
        expect_json 'any(f["id"]=="nccl-conf-file-in-file" and f["subject"].endswith(".nccl.conf:1") for f in d["findings"])' "NCCL_CONF_FILE set inside a file: not followed, said"
        expect_json 'not any(s["name"]=="NCCL_NSOCKS_PERTHREAD" for s in d["nccl_config"]["settings"])' "and the file it names is not read"
        expect_json 'sum(f["id"]=="nccl-conf-cut" for f in d["findings"]) == 2 and any("the value on this line is longer than 1,023" in f["why"] for f in d["findings"])' "a name and a value cut at 1,023 characters: said"
        printf 'NCCL_SOCKET_NTHREADS=2\n' >"$H/.nccl.conf"
        mkdir -p "$T_TMP/otherhome"; printf 'NCCL_NSOCKS_PERTHREAD=9\n' >"$T_TMP/otherhome/.nccl.conf"
        agree "HOME is not the passwd home directory" HOME="$T_TMP/otherhome"
        expect_json 'any(f["id"]=="nccl-conf-home" and "otherhome/.nccl.conf is not read" in f["why"] for f in d["findings"])' "\$HOME/.nccl.conf, not read by NCCL: said"
    else
        t_skip_part "the real libnccl (${T_NCCL:-none found}) as the oracle of the configuration files"
    fi
    rm "$E/nccl.conf"; mkfifo "$E/nccl.conf"
    run inns timeout 20 "${D[@]}" --json
    expect_json 'any(f["id"]=="nccl-conf-unreadable" and "not a regular file" in f["why"] for f in d["findings"])' "a FIFO at /etc/nccl.conf is reported, not read (no hang)"
else
    echo "# not root or no mount namespaces: the /etc/nccl.conf and ~/.nccl.conf cases did not run"
fi
t_end
