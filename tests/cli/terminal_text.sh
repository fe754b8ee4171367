# Untrusted text never drives the terminal: control characters (ESC, BEL, CR,
# C1 CSI) from survey hostnames and GPU names, libtorch's .active, file paths,
# ELF contents and error messages are shown escaped by every command's text
# output (src/cli/safe_text.c), and JSON stays exact.
. "$(dirname "$0")/lib.sh"
T=$T_TMP
unset LIBTORCH

# raw_controls: stdout+stderr hold a byte a terminal would act on (C0 but \n and \t, DEL, C1 in UTF-8)
raw_controls() { printf '%s%s' "$OUT" "$ERR" | LC_ALL=C grep -qP '[\x00-\x08\x0b-\x1f\x7f]|\xc2[\x80-\x9f]'; }
expect_clean() { raw_controls && bad "$1 (a raw control character reached the output)" || ok "$1"; }

ESC=$'\033'
TITLE="${ESC}]0;pwned${ESC}\\"
CLEAR="${ESC}[2J${ESC}[H"
CSI=$'\xc2\x9b'31m
python3 - "$T/host.json" "$TITLE" "$CLEAR" "$CSI" <<'PY'
import json, sys
path, title, clear, csi = sys.argv[1:]
json.dump({"host": {"hostname": "node" + title + "\rcclforge doctor: host fine"},
           "gpus": [{"vendor": "nvidia", "name": "H100" + clear + csi, "arch": "sm_90"}]}, open(path, "w"))
PY
run "$CCLFORGE" doctor --no-python --survey "$T/host.json"
expect_clean "doctor: a hostile hostname and GPU name"
expect_out 'node\\e\]0;pwned\\e\\\\rcclforge' "the hostname is shown with \\e and \\r escaped"
expect_out 'H100\\e\[2J\\e\[H\\u009b31m' "the GPU name with ESC and the C1 CSI escaped"
run "$CCLFORGE" doctor --no-python --survey "$T/host.json" --json
expect_json "d['gpus'][0]['name'] == 'H100' + '$CLEAR' + '\u009b31m'" "--json keeps the exact name (JSON escapes it)"

# NCCL's configuration and the fabric (doctor's own sections): a variable's
# value, a file path, an interface and an InfiniBand device name
python3 - "$T/conf.json" "$TITLE" "$CLEAR" <<'PY'
import json, sys
path, title, clear = sys.argv[1:]
json.dump({"host": {"hostname": "node1"},
           "nccl_config": {"flavour": "nccl", "files": [{"path": "/etc/nccl" + clear + ".conf", "role": "system",
                                                        "present": True, "read": True, "settings": 1}],
                           "settings": [{"name": "NCCL_SOCKET_IFNAME", "value": "eth0" + title,
                                         "source": "/etc/nccl.conf", "overridden": ["x" + clear]}]},
           "fabric": {"ifs": [{"name": "eth" + clear, "up": True, "addrs": ["10.0.0.1" + title]}],
                      "ib": [{"name": "mlx5" + title, "ports": [{"port": 1, "state_name": "ACTIVE" + clear}]}]}},
          open(path, "w"))
PY
run "$CCLFORGE" doctor --no-python --survey "$T/conf.json"
expect_clean "doctor: a hostile NCCL configuration and fabric"
expect_out '^  NCCL_SOCKET_IFNAME=eth0\\e\]0;pwned\\e\\  \(' "the configuration's line shows the value escaped"
expect_out '^  mlx5\\e\]0;pwned\\e\\:1 ACTIVE\\e\[2J' "the fabric's line shows the device and port state escaped"

# libtorch's variants root: .active holds a terminal title sequence
mkdir -p "$T/variants"
printf '%s' "cu124${TITLE}" > "$T/variants/.active"
run "$CCLFORGE" doctor --no-python --libtorch "$T/variants" --survey "$T/host.json"
expect_clean "doctor: a hostile .active"
expect_err 'variants/cu124\\e\]0;pwned\\e\\ holds no libtorch' "the variant is shown escaped in the error"

# a file path with control characters, and an ELF whose banner is hostile
cc -shared -fPIC -o "$T/lib${ESC}[2Jx.so" -x c - <<<'const char b[] = "NCCL version 2.28.9+cuda13.0\033[2J"; int f(void){return b[0];}'
run "$CCLFORGE" inspect "$T/lib${ESC}[2Jx.so"
expect_clean "inspect: a hostile file name and banner"
expect_out 'lib\\e\[2Jx\.so' "the path is shown escaped"
run "$CCLFORGE" inspect "$T/missing"$'\n'"cclforge inspect: 0 errors, 0 warnings"
expect_clean "inspect: a path with a newline"
printf '%s\n%s' "$OUT" "$ERR" | grep -q '^cclforge inspect: 0 errors' && bad "a newline in a path forged a line" \
    || ok "a newline in a path cannot forge a line of cclforge's own"

# usage errors echo the user's argument escaped
run "$CCLFORGE" "frob${CLEAR}"
expect_rc 2 "an unknown command"
expect_clean "an unknown command with escapes"
run "$CCLFORGE" nccl activate "v1${TITLE}" --root "$T/root"
expect_rc 2 "a build name with escapes is not a build name"
expect_clean "nccl activate with escapes"
expect_err "'v1\\\\e\]0;pwned" "and is shown escaped"
t_end
