# FIFOs, sockets and devices given to or met by any command: a clear error
# naming the path, never a hang (each run is under `timeout`, and a FIFO with
# no writer blocks a reader forever), and a truncated dependency is a load
# error as glibc reports it ("cannot read file data" / past the end).
. "$(dirname "$0")/lib.sh"

cd "$T_TMP" || exit 1
TO="timeout 60"
mkfifo fifo.so
mkdir -p llp sys/class/kfd/kfd/topology/nodes/0
mkfifo llp/libnccl.so.2 llp/librccl.so.1
mkfifo sys/class/kfd/kfd/topology/nodes/0/properties sys/class/kfd/kfd/topology/nodes/0/name
python3 -c 'import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])' sock.so
printf 'int a_fn(void){return 1;}\n' >a.c
cc -shared -fPIC -o liba.so a.c -Wl,-soname,liba.so || { echo "cc failed"; exit 1; }

run $TO "$CCLFORGE" inspect fifo.so
expect_rc 1 "inspect FIFO exits 1 (not 124: no hang)"
expect_err "fifo\.so: is a FIFO \(named pipe\), not a regular file" "the error names the FIFO and what it is"

run $TO "$CCLFORGE" inspect fifo.so liba.so
expect_rc 1 "a FIFO among files does not block the others"
expect_out "liba\.so: [0-9]+ object" "the regular file next to it is inspected"

run $TO "$CCLFORGE" inspect sock.so /dev/null
expect_rc 1 "a socket and a character device exit 1"
expect_err "sock\.so: is a socket" "the socket is named"
expect_err "/dev/null: is a character device" "the device is named"

# a FIFO as the library the default mode looks for: the loader would block on it
run $TO "$CCLFORGE" inspect --ld-library-path "$T_TMP/llp" --explain
expect_rc 0 "default mode with FIFOs on the path finishes"
expect_out "llp/libnccl\.so\.2 +\[LD_LIBRARY_PATH\] loader error: a FIFO" "the FIFO candidate is a loader error, not opened"

# a FIFO named as a dependency: a load error for the program that needs it
printf 'int a_fn(void); int main(void){return a_fn();}\n' >app.c
cc -o app app.c -L. -la -Wl,-rpath,"$T_TMP/dep" || exit 1
mkdir -p dep && mkfifo dep/liba.so
run $TO "$CCLFORGE" inspect app
expect_rc 1 "a FIFO dependency exits 1"
expect_out "\[load-error\] .*dep/liba\.so.*FIFO" "the FIFO dependency is a load error naming it"

# doctor: a FIFO libnccl.so.2 / librccl.so.1 on LD_LIBRARY_PATH, FIFOs under --sysfs-root, a FIFO --survey
run env LD_LIBRARY_PATH="$T_TMP/llp" $TO "$CCLFORGE" doctor --no-python --no-nvidia
[ "$RC" -ne 124 ] && ok "doctor with FIFO comm libraries on LD_LIBRARY_PATH finishes" || bad "doctor hung on a FIFO"
run $TO "$CCLFORGE" doctor --no-python --no-nvidia --sysfs-root "$T_TMP"
[ "$RC" -ne 124 ] && ok "doctor --sysfs-root with FIFO topology files finishes" || bad "doctor hung on a FIFO in sysfs"
run env NCCL_CONF_FILE="$T_TMP/fifo.so" $TO "$CCLFORGE" doctor --no-python --no-nvidia
[ "$RC" -ne 124 ] && ok "doctor with a FIFO NCCL_CONF_FILE finishes" || bad "doctor hung on a FIFO NCCL_CONF_FILE"
expect_out "fifo\.so is not a regular file" "the FIFO configuration file is named"
run $TO "$CCLFORGE" doctor --survey fifo.so
expect_rc 2 "doctor --survey FIFO is a usage error"
expect_err "fifo\.so: is a FIFO" "doctor names the FIFO survey"
run $TO "$CCLFORGE" doctor compare fifo.so fifo.so
[ "$RC" -ne 124 ] && [ "$RC" -ne 0 ] && ok "doctor compare FIFO fails without hanging" || bad "doctor compare FIFO"
run $TO "$CCLFORGE" nccl env --host-survey fifo.so --root "$T_TMP/none"
[ "$RC" -ne 124 ] && [ "$RC" -ne 0 ] && ok "nccl env --host-survey FIFO fails without hanging" || bad "nccl env --host-survey FIFO"
mkfifo x-1.0-py3-none-any.whl
run $TO "$CCLFORGE" wheel verify x-1.0-py3-none-any.whl
[ "$RC" -ne 124 ] && [ "$RC" -ne 0 ] && ok "wheel verify on a FIFO fails without hanging" || bad "wheel verify FIFO"

# truncated dependencies, as glibc's loader reports them
cc -shared -fPIC -o full.so a.c -Wl,-soname,liba.so
mkdir -p cut1 cut2
head -c 200 full.so >cut1/liba.so    # program headers cut off
head -c 3000 full.so >cut2/liba.so   # segments cut off: ld.so would die of SIGBUS
for d in cut1 cut2; do
    cc -o "app_$d" app.c -L. -la -Wl,-rpath,"$T_TMP/$d"
done
run $TO "$CCLFORGE" inspect app_cut1
expect_rc 1 "program headers cut off: exit 1"
expect_out "\[load-error\] .*cut1/liba\.so.*cannot read file data" "glibc's words: cannot read file data"
expect_out "app_cut1: 2 objects|app_cut1: 3 objects" "the truncated library is not counted as an object"
run $TO "$CCLFORGE" inspect --json app_cut2
expect_rc 1 "segments cut off: exit 1"
expect_json 'any(p["kind"] == "load-error" and "past the end of the file" in p["message"] for p in d["targets"][0]["problems"])' "a segment past the end is a load error"
expect_json 'not any(o["path"].endswith("cut2/liba.so") for o in d["targets"][0]["objects"])' "and not an object"
t_end
