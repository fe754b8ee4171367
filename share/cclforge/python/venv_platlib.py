# `cclforge wheel verify --site DIR`: where this interpreter installs
# extension modules (its platlib), the directory DIR's packages are linked
# into (src/pkg/wheel_install.c).
import sysconfig
print(sysconfig.get_paths()['platlib'])
