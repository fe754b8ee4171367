# `cclforge wheel verify --install`: one extension module of the installed
# wheel imported in its own interpreter (python -I wheel_import.py ...), its
# result sent on a private channel (src/pkg/wheel_install.c says why).
#
# argv: the module; "1" when the wheel's marker names it the bridge, "2" when
# only its data names make_nccl_backend (a bridge most likely: torch first,
# but a bridge only if it exports the factory), else "0" (a module exporting
# make_nccl_backend is taken for one too: a plugin's own wheel carries the
# bridge without the marker); the descriptors of the nonce's pipe and of the
# result file. An import that raises is a result too: its traceback, and the
# module a ModuleNotFoundError names. The ABI facts are the C symbol
# cclforge's ABI guard puts in every bridge it builds
# (share/cclforge/bridge/cclforge_abi_guard.cpp: the layout of Facts below),
# read through ctypes from the module's own file, with the libtorch and comm
# library this process really mapped. The result: "<nonce> <JSON>\n", once,
# after everything else.
import json, os, sys, importlib, ctypes
name, mark = sys.argv[1], sys.argv[2]
bridge = mark == '1'
nonce_fd, result_fd = int(sys.argv[3]), int(sys.argv[4])
nonce = os.read(nonce_fd, 64).decode('ascii')
os.close(nonce_fd)
out = {'module': name}
def send(out):
    data = (nonce + ' ' + json.dumps(out) + '\n').encode()
    while data:
        data = data[os.write(result_fd, data):]
    os.close(result_fd)
try:
    if mark != '0':
        import torch.distributed
    m = importlib.import_module(name)
except BaseException as e:
    import traceback
    out['error'] = traceback.format_exc()
    if isinstance(e, ModuleNotFoundError) and e.name:
        out['missing'] = e.name
    send(out)
    sys.exit(0)
out['file'] = os.path.realpath(m.__file__)
out['has_make_nccl_backend'] = callable(getattr(m, 'make_nccl_backend', None))
bridge = bridge or out['has_make_nccl_backend']
out['bridge'] = bridge
class Facts(ctypes.Structure):
    _fields_ = [('magic', ctypes.c_char * 16), ('options_size_headers', ctypes.c_int64),
                ('options_size_libtorch', ctypes.c_int64), ('process_group_size_headers', ctypes.c_int64),
                ('process_group_size_libtorch', ctypes.c_int64), ('nccl_header_code', ctypes.c_int32),
                ('reserved', ctypes.c_int32), ('nccl_libtorch', ctypes.c_char * 16),
                ('torch_gpu_lib', ctypes.c_char * 64), ('comm_lib', ctypes.c_char * 64),
                ('vendor', ctypes.c_char * 16)]
def nccl_text(code):
    if code <= 0:
        return ''
    big = code >= 10000
    return '%d.%d.%d' % (code // 10000 if big else code // 1000, code % 10000 // 100 if big else code % 1000 // 100, code % 100)
def mapped(pred):
    with open('/proc/self/maps') as f:
        for line in f:
            p = line.split(None, 5)[-1].strip() if len(line.split(None, 5)) == 6 else ''
            if p.startswith('/') and pred(os.path.basename(p)):
                return p
    return ''
def abi_facts(path):
    try:
        f = Facts.in_dll(ctypes.CDLL(path), 'cclforge_abi_info')
    except (OSError, ValueError) as e:
        return None
    if f.magic != b'cclforge-abi/1':
        return {'format': f.magic.decode('ascii', 'replace')}
    d = {k: getattr(f, k) for k in ('options_size_headers', 'options_size_libtorch',
                                    'process_group_size_headers', 'process_group_size_libtorch')}
    d['nccl_header'] = nccl_text(f.nccl_header_code)
    d['nccl_libtorch'] = f.nccl_libtorch.decode()
    d['libtorch_file'] = mapped(lambda b: b == f.torch_gpu_lib.decode()) if f.torch_gpu_lib else ''
    comm = f.comm_lib.decode()
    lib = mapped(lambda b: b == comm or b.startswith(comm + '.')) if comm else ''
    d['comm_file'] = lib
    d['nccl_runtime'] = ''
    if lib:
        v = ctypes.c_int(0)
        try:
            if ctypes.CDLL(lib, mode=os.RTLD_NOLOAD | os.RTLD_LAZY).ncclGetVersion(ctypes.byref(v)) == 0:
                d['nccl_runtime'] = nccl_text(v.value)
        except (OSError, AttributeError):
            pass
    return d
if bridge:
    import torch, torch.distributed as dist
    out['torch'] = torch.__version__
    out['gpus'] = torch.cuda.device_count()
    facts = abi_facts(out['file'])
    if facts is not None:
        out['abi'] = facts
if bridge and out['has_make_nccl_backend']:
    store = dist.HashStore()
    try:
        b = m.make_nccl_backend(store, 0, 1, timeout_ms=30000)
        out['call'] = 'returned ' + type(b).__name__
    except Exception as e:
        out['call'] = 'raised'
        out['exception'] = type(e).__name__ + ': ' + str(e).strip().splitlines()[0][:400]
send(out)
