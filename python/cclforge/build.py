"""The plugin build API: a ProcessGroupNCCL bridge as an ext_module of a
plugin's own setup.py, planned and built by the cclforge binary (`cclforge
bridge plan --json`, `cclforge bridge build`); nothing here computes a plan.

    from setuptools import setup
    from cclforge.build import bridge_extension, build_ext

    setup(...,
          ext_modules=[bridge_extension("torch_fl.comm._nccl_ext._flagos_nccl",
                                        ["torch_fl/comm/_nccl_ext/nccl_backend.cpp"])],
          cmdclass={"build_ext": build_ext})

`build_ext` builds such an extension exactly by the plan: cclforge's ABI guard
linked in, the headers proven, $ORIGIN-relative RPATHs only (none from
setuptools or Python's libdir), every symbol resolved against the vendor
libraries in the installed layout. Other extensions build as setuptools builds
them.
"""
import json
import os
import shutil
import subprocess
import sys

from ._binary import find as _binary

__all__ = ["bridge_extension", "build_ext", "BridgePlanError", "bridge_args", "requirements"]


class BridgePlanError(RuntimeError):
    """The plan has problems (each a sentence with its fix), or cclforge failed."""


# keyword -> the `cclforge bridge` flag; a list value repeats the flag
_FLAGS = {
    "vendor": "--vendor", "libtorch": "--libtorch", "torch_headers": "--torch-headers",
    "vendor_libs": "--vendor-libs", "toolkit": "--toolkit", "nccl_home": "--nccl-home",
    "python": "--python", "cxx": "--cxx", "into": "--into", "max_glibc": "--max-glibc",
    "docker": "--docker", "rpath": "--rpath", "bundle": "--bundle", "include": "--include",
    "define": "--define", "undefine": "--undefine", "toolkit_lib": "--toolkit-lib",
}


def bridge_args(name, sources, extra_args=(), **options):
    """The `cclforge bridge plan|build` arguments for module `name` (dotted:
    package and module) built from `sources` (one .cpp or several, one of which
    defines make_nccl_backend) with `options` named as the CLI's flags
    (vendor_libs="..." for --vendor-libs, rpath=[...] repeats)."""
    if "." not in name:
        raise ValueError("bridge_extension: name %r must be dotted: <package>.<module>" % name)
    srcs = [sources] if isinstance(sources, (str, os.PathLike)) else list(sources)
    if not srcs:
        raise ValueError("bridge_extension: no source for %s: pass the bridge's .cpp files" % name)
    package, module = name.rsplit(".", 1)
    args = ["--package", package, "--name", module]
    for src in srcs:
        args += ["--source", os.path.abspath(os.fspath(src))]
    options.setdefault("python", sys.executable)
    for key, value in options.items():
        if key not in _FLAGS:
            raise TypeError("bridge_extension: unknown option %r (known: %s)" % (key, ", ".join(sorted(_FLAGS))))
        if value is None:
            continue
        for v in ([value] if isinstance(value, str) else list(value)):
            args += [_FLAGS[key], os.fspath(v)]
    return args + [os.fspath(a) for a in extra_args]


def _run(argv):
    r = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    try:
        doc = json.loads(r.stdout) if r.stdout.strip() else {}
    except ValueError:
        doc = {}
    return r.returncode, doc, r.stderr.strip()


def plan(name, sources, extra_args=(), **options):
    """`cclforge bridge plan --json` for these arguments: the plan's dict.
    BridgePlanError lists its problems when it has any."""
    rc, doc, err = _run([_binary(), "bridge", "plan", "--json", *bridge_args(name, sources, extra_args, **options)])
    p = doc.get("plan")
    if p is None:
        raise BridgePlanError("cclforge bridge plan failed (exit %d): %s" % (rc, err))
    if p.get("problems"):
        raise BridgePlanError("the bridge plan for %s has %d problem(s):\n  - %s"
                              % (name, len(p["problems"]), "\n  - ".join(p["problems"])))
    return p


def bridge_extension(name, sources, extra_args=(), **options):
    """A setuptools.Extension for the bridge `name` from the plan: its include
    dirs, defines, libraries and $ORIGIN-relative runtime dirs. Build it with
    this module's build_ext, which builds it by the plan itself."""
    from setuptools import Extension

    args = bridge_args(name, sources, extra_args, **options)
    p = plan(name, sources, extra_args, **options)
    defines = []
    for d in p["defines"]:
        key, _, value = d["value"].partition("=")
        defines.append((key, value or None))
    libs = [lib["path"] for lib in p["libraries"] if lib.get("path")]
    ext = Extension(
        name,
        sources=[os.path.abspath(os.fspath(s)) for s in ([sources] if isinstance(sources, (str, os.PathLike)) else sources)],
        include_dirs=[i["value"] for i in p["includes"]],
        define_macros=defines,
        library_dirs=sorted({os.path.dirname(f) for f in libs}),
        extra_link_args=["-l:" + os.path.basename(f) for f in libs] + ["-Wl,--disable-new-dtags"],
        runtime_library_dirs=[r["value"] for r in p["rpath"]],
        extra_compile_args=["-std=" + (p["compiler"].get("std") or "c++17"), "-fvisibility=hidden"],
        language="c++",
    )
    ext._cclforge_args = args
    ext._cclforge_plan = p
    return ext


def _owner(lib):
    """(name, version) of the installed distribution whose RECORD lists the file lib, or None."""
    from importlib import metadata

    d = os.path.dirname(os.path.realpath(lib))
    real = os.path.realpath(lib)
    while d != os.path.dirname(d):
        if any(e.endswith(".dist-info") for e in os.listdir(d)):
            for dist in metadata.distributions(path=[d]):
                for f in dist.files or ():
                    if os.path.realpath(os.path.join(d, f)) == real:
                        return dist.metadata["Name"], dist.version
        d = os.path.dirname(d)
    return None


def requirements(plan_doc):
    """The Requires-Dist a plan implies: the installed distributions that own
    the libraries it links from a site-packages (torch, the NCCL wheel),
    torch pinned to the minor version it was built against (its C++ ABI),
    any other at least the version built against."""
    reqs = []
    for lib in plan_doc.get("libraries") or []:
        path = lib.get("path")
        owner = _owner(path) if path and os.path.exists(path) else None
        if not owner:
            continue
        name, version = owner
        release = version.split("+")[0]
        if name.lower() == "torch":
            spec = "%s==%s.*" % (name, ".".join(release.split(".")[:2]))
        else:
            spec = "%s>=%s" % (name, release)
        if spec not in reqs:
            reqs.append(spec)
    return reqs


def _make_build_ext():
    from setuptools.command.build_ext import build_ext as base

    class build_ext(base):
        """setuptools' build_ext, but a bridge_extension is built by
        `cclforge bridge build` (the plan, the ABI guard, the check in the
        installed layout) and its output copied where setuptools puts it.
        When the project declares no install_requires, the wheel requires
        what the plans link from site-packages (torch, the NCCL wheel): pip
        installs them, and `wheel verify` finds the RUNPATH directories they
        own declared by that."""

        def run(self):
            dist = self.distribution
            plans = [getattr(e, "_cclforge_plan", None) for e in (self.extensions or [])]
            if not dist.install_requires and any(plans):
                reqs = []
                for p in plans:
                    for r in requirements(p or {}):
                        if r not in reqs:
                            reqs.append(r)
                if reqs:
                    dist.install_requires = reqs
                    dist.metadata.install_requires = reqs  # newer setuptools writes Requires-Dist from here
                    if dist.have_run.get("egg_info"):  # already written: again, with them
                        self.get_finalized_command("egg_info").run()
            super().run()

        def build_extension(self, ext):
            args = getattr(ext, "_cclforge_args", None)
            if args is None:
                return super().build_extension(ext)
            out = os.path.join(os.path.abspath(self.build_temp), "cclforge-bridge", ext.name)
            rc, doc, err = _run([_binary(), "bridge", "build", *args, "-o", out, "--json"])
            built = (doc.get("build") or {}).get("output")
            if rc != 0 or not built:
                problems = (doc.get("plan") or {}).get("problems") or []
                raise BridgePlanError("cclforge bridge build of %s failed (exit %d): %s%s"
                                      % (ext.name, rc, err, "".join("\n  - " + p for p in problems)))
            dest = self.get_ext_fullpath(ext.name)
            os.makedirs(os.path.dirname(dest), exist_ok=True)
            shutil.copyfile(built, dest)
            os.chmod(dest, 0o755)

    return build_ext


def __getattr__(attr):
    # setuptools is imported only by a build that asks for build_ext
    if attr == "build_ext":
        cls = _make_build_ext()
        globals()["build_ext"] = cls
        return cls
    raise AttributeError(attr)
