# cmake -DIN=FILE -DOUT=FILE.c -DNAME=SYMBOL -DHEADER=DIR/NAME.h -P cmake/embed.cmake
# FILE's bytes as a C array, `const char SYMBOL[] = { ..., 0 };` (a string:
# its NUL added; HEADER declares it), so that a stylesheet or a script is kept
# as the file it is, read and checked as one, and compiled into the binary
# (nothing read at run time). CMake itself writes it: no tool beyond CMake,
# the same build under zig cc (scripts/dist.sh).
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
# a byte above 0x7f as char, whatever char's signedness: no narrowing warning
string(REGEX REPLACE "0x([89a-f][0-9a-f])," "(char)0x\\1," bytes "${bytes}")
string(REPEAT "[^,]+," 12 twelve) # CMake's regex has no {12}
string(REGEX REPLACE "(${twelve})" "\\1\n    " bytes "${bytes}")
get_filename_component(from "${IN}" NAME)
file(WRITE "${OUT}" "/* Generated from ${from} by cmake/embed.cmake: edit that file. */
#include \"${HEADER}\"

const char ${NAME}[] = {
    ${bytes}0
};
")
