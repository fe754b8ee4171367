# Strangers on a rendezvous port, with real processes
# and real sockets: tests/fixtures/rdv_stranger.py holds no secret. A hello whose
# tag is "joined twice" with a zero MAC must not end a 2-rank smoke (real NCCL,
# unique-id rendezvous) nor a 2-rank doctor --gather; a wrong tag is answered by a
# code that carries neither its tag nor ours; 20 connections that never speak
# must not make a gather fail nor blame rank 1, and the report names them.
# The ranks are started by hand as a launcher would (CCLFORGE_RANK ... and
# torchrun's variables), so that the strangers are in before rank 1.
. "$(dirname "$0")/lib.sh"
command -v python3 >/dev/null || t_skip "python3 is missing: the stranger is a Python script"
# the interpreter itself (not a pyenv shim) without site (-S): the stranger uses the standard library only
PY=$(python3 -c 'import sys; print(sys.executable)')
STRANGER=("$PY" -S "${CCLFORGE_SOURCE_DIR:?}/tests/fixtures/rdv_stranger.py")
RC=0 OUT="" ERR="" # bad() shows them; the first checks come before any run
G=(doctor --gather --no-python --no-nvidia)
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
SECRET=$(python3 -c 'import secrets; print(secrets.token_hex(32))')
# rank N of a 2-rank gather on port $PORT
gather_rank() {
    local r=$1; shift
    env CCLFORGE_RANK=$r CCLFORGE_WORLD_SIZE=2 CCLFORGE_LOCAL_RANK=$r CCLFORGE_MASTER_ADDR=127.0.0.1 \
        CCLFORGE_PORT=$PORT CCLFORGE_SECRET=$SECRET "$CCLFORGE" "${G[@]}" --timeout 20 "$@"
}
# checks that a reply line of the stranger carries none of the words
reply_lacks() { # REPLY DESC WORD...
    local reply=$1 desc=$2 hex w; shift 2
    for w in "$@"; do
        hex=$(printf '%s' "$w" | od -An -tx1 | tr -d ' \n')
        case "$reply" in *"$w"* | *"$hex"*) bad "$desc: the refusal carries '$w': $reply"; return ;; esac
    done
    ok "$desc"
}

# ---- 1. a hello tagged "joined twice" with a zero MAC during a 2-rank gather ----
PORT=$(free_port)
gather_rank 0 --json >"$T_TMP/g0.json" 2>"$T_TMP/g0.err" &
G0=$!
REPLY=$("${STRANGER[@]}" hello 127.0.0.1 "$PORT" "joined twice" 1 2)
case "$REPLY" in "reply type=R len=37 "*) ok "the stranger is refused with a 37-byte code" ;; *) bad "stranger's reply: $REPLY" ;; esac
reply_lacks "$REPLY" "the refusal holds neither the stranger's tag nor ours" "joined twice" "joined" "doctor"
REPLY2=$("${STRANGER[@]}" hello 127.0.0.1 "$PORT" "doctor" 1 3)
reply_lacks "$REPLY2" "a right tag without the secret learns not even rank 0's world size" "doctor"
case "$REPLY2" in *"hex=03000000000000"*) ok "it is told 'failed authentication' (code 3) and nothing else" ;; *) bad "reply: $REPLY2" ;; esac
run gather_rank 1
RC1=$RC
wait $G0; RC0=$?
OUT=$(cat "$T_TMP/g0.json"); ERR=$(cat "$T_TMP/g0.err")
RC=$RC0
expect_rc 0 "rank 0 of the gather is not ended by the stranger's hello"
[ "$RC1" = 0 ] && ok "rank 1 joined and got the verdict" || bad "rank 1 exit $RC1"
expect_json 'sorted(d["hosts"][0]["ranks"])==[0,1] and d["missing"]==[]' "both ranks heard, nobody missing"
expect_json 'd["strays"]["count"]==2 and d["strays"]["kinds"]=={"wrong_tag":1,"bad_mac":1} and d["strays"]["addresses"]==[{"addr":"127.0.0.1","count":2}]' \
    "the two strangers are counted as strays, by kind, with their address"

# ---- 2. 20 connections that never speak during a 2-rank gather --timeout 20 ----
# gather_with_silent N ARGS...: rank 0 (ARGS; its stdout in $OUT, exit in $RC),
# N silent connections, then rank 1 (exit in $RC1)
gather_with_silent() {
    local n=$1 s g0; shift
    PORT=$(free_port)
    gather_rank 0 "$@" >"$T_TMP/g0.out" 2>"$T_TMP/g0.err" &
    g0=$!
    rm -f "$T_TMP/ready"
    "${STRANGER[@]}" silent 127.0.0.1 "$PORT" "$n" --ready "$T_TMP/ready" &
    s=$!
    for _ in $(seq 500); do [ -e "$T_TMP/ready" ] && break; sleep 0.01; done
    [ -e "$T_TMP/ready" ] && ok "$n silent connections are open before rank 1 starts" || bad "the silent connections did not open"
    gather_rank 1 >"$T_TMP/g1.out" 2>&1; RC1=$?
    wait $g0; RC=$?
    kill $s 2>/dev/null; wait $s 2>/dev/null
    OUT=$(cat "$T_TMP/g0.out"); ERR=$(cat "$T_TMP/g0.err")
}
gather_with_silent 20 --json
expect_rc 0 "the gather passes with 20 silent connections (it failed after 21 s)"
[ "$RC1" = 0 ] && ok "rank 1 exits 0 too" || bad "rank 1 exit $RC1: $(cat "$T_TMP/g1.out")"
expect_json 'not any(f["id"]=="host-no-answer" for f in d["findings"]) and d["missing"]==[]' "rank 1 is not blamed (no host-no-answer)"
expect_json 'd["strays"]["count"]==20 and d["strays"]["kinds"]=={"silent":20} and d["strays"]["addresses"][0]["addr"]=="127.0.0.1"' \
    "the report counts the 20 strays and names their address"
expect_json 'any(f["id"]=="gather-strays" and f["severity"]=="warning" and "20 connections never completed a handshake (20 silent), from 127.0.0.1 (20)" in f["why"] for f in d["findings"])' \
    "a warning names them: count, kind, address"
gather_with_silent 3 # the text report says it too
expect_out "gather-strays" "the text report names the finding"
expect_out "3 connections never completed a handshake \(3 silent\), from 127\.0\.0\.1 \(3\)" "and the strays"

# ---- the wording: a rank that cannot reach its supervisor says so ----
# (it said "rank 0 reaching its supervisor: rank 0 could not reach rank 0 at ...")
run env CCLFORGE_SMOKE_SUPERVISED=1 CCLFORGE_SMOKE_SUPERVISOR=127.0.0.1:1 CCLFORGE_RANK=0 CCLFORGE_WORLD_SIZE=1 \
    CCLFORGE_SECRET="$SECRET" "$CCLFORGE" smoke --connect-timeout 1
expect_rc 1 "a rank without its supervisor fails"
expect_err "rank 0 could not reach the supervisor at 127\.0\.0\.1:1 within 1 s" "and names what it could not reach"
printf '%s' "$ERR" | grep -q "could not reach rank 0" && bad "it says it could not reach rank 0" || ok "not 'rank 0 could not reach rank 0'"

# ---- 3. the same hello during a 2-rank smoke with the real NCCL ----
NCCL=
t_find_nccl && NCCL=$T_NCCL
if [ -n "$NCCL" ]; then
    MPORT=$(free_port) # torchrun's MASTER_PORT: cclforge listens on MASTER_PORT+1
    smoke_rank() { RANK=$1 WORLD_SIZE=2 LOCAL_RANK=$1 MASTER_ADDR=127.0.0.1 MASTER_PORT=$MPORT "$CCLFORGE" smoke --lib "$NCCL" --connect-timeout 20; }
    smoke_rank 0 >"$T_TMP/s0.out" 2>&1 &
    S0=$!
    REPLY=$("${STRANGER[@]}" hello 127.0.0.1 $((MPORT + 1)) "joined twice" 1 2)
    reply_lacks "$REPLY" "smoke's refusal holds neither the stranger's tag nor ours" "joined twice" "joined" "smoke"
    REPLY=$("${STRANGER[@]}" hello 127.0.0.1 $((MPORT + 1)) "world size mismatch" 1 2)
    reply_lacks "$REPLY" "nor any text the stranger chose" "world size" "mismatch"
    smoke_rank 1 >"$T_TMP/s1.out" 2>&1
    wait $S0
    OUT=$(cat "$T_TMP/s0.out")
    expect_no_out "unique-id rendezvous over TCP.*(joined twice|world size mismatch)" "rank 0 is not ended at the unique-id rendezvous"
    expect_out 'RANK_INFO rank=0 local_rank=0 rendezvous_strays="2 connections never completed a handshake \(2 another channel\), from 127\.0\.0\.1 \(2\)"' \
        "rank 0 names the strays"
    ids=$(cat "$T_TMP/s0.out" "$T_TMP/s1.out" | sed -n 's/^RANK_INFO rank=\([01]\) .*unique_id_fnv1a="\([0-9a-f]*\)"/\2/p' | sort -u)
    [ "$(printf '%s\n' "$ids" | grep -c .)" = 1 ] && ok "both ranks hold the same unique id: the rendezvous completed" \
        || bad "unique ids: $ids; rank 1: $(tail -n 3 "$T_TMP/s1.out")"
    if grep -q '^RANK_INFO rank=0 local_rank=0 device_count="[1-9]' "$T_TMP/s0.out"; then
        grep -q "^verdict: PASS" "$T_TMP/s0.out" && ok "the smoke passes (GPU here)" || bad "the smoke did not pass: $(tail -n 2 "$T_TMP/s0.out")"
    else
        echo "# no GPU here: the ranks go on to ncclCommInitRank, which fails without one"
        grep -q 'ncclCommInitRank failed' "$T_TMP/s0.out" && ok "rank 0 went on to ncclCommInitRank" || bad "rank 0: $(tail -n 3 "$T_TMP/s0.out")"
    fi
else
    t_skip_part "the smoke part: no libnccl.so.2 with its nccl.h on this machine"
fi
t_end
