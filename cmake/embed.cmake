# cmake -DIN=file -DOUT=header.h -DNAME=symbol -P embed.cmake
# Writes OUT declaring `static const char NAME[]`: IN's bytes, NUL-terminated.
# How the server carries files it writes out whole (the --html report's
# page, server/store/report.html) without reading anything at run time.
file(READ "${IN}" hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," hex "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" hex "${hex}")
file(WRITE "${OUT}.tmp" "/* generated from ${IN} by cmake/embed.cmake; do not edit */\nstatic const char ${NAME}[] = {\n${hex}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
