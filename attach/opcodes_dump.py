"""Run by `hotline attach` in the target's own interpreter (-I -S, no user
code), after _hotline_agent/_opcodes.py's text (attach/opcodes.c joins
them): prints that interpreter's opcode tables (sampling/site.h,
site_ops_t) and its stack effects (site_effects_t), which attach cannot get
by calling PyCompile_OpcodeStackEffectWithJump as the agent does.

Output, one item a line: "hotline-opcodes 1", "MAJOR.MINOR", jump_bytes
(0/1), the five tables in hex (256 bytes each), then per (jump, opcode)
with a known effect "c JUMP OP K VALUE" (the same for every oparg below
256) or "e JUMP OP K HEX" (256 int16 little endian, -32768: not known),
K the effect's step per 256 of oparg above 255 (-32768: not known), "end"."""


def _dump():
    import array
    import dis
    import sys

    NONE = -32768
    cls, caches, bases, flags, layouts, jump_bytes = tables()
    out = ["hotline-opcodes 1", "%d.%d" % sys.version_info[:2], str(int(jump_bytes))]
    out += [bytes(t).hex() for t in (cls, caches, bases, flags, layouts)]
    # oparg values above 255 the step is checked at (the rule
    # tab[arg & 255] + k * (arg >> 8) covers constant, bit-flag, linear
    # and UNPACK_EX's two-byte effects)
    probe = list(range(256, 1100, 7)) + [4095, 4096, 65535, 65536, 1 << 20]
    for op in sorted(set(bases)):
        for jump in (0, 1):
            j = bool(jump)
            try:
                dis.stack_effect(op, 0, jump=j)
            except ValueError:
                try:  # an opcode without an argument
                    out.append("c %d %d 0 %d" % (jump, op, dis.stack_effect(op, jump=j)))
                except ValueError:
                    pass
                continue
            row = []
            for a in range(256):
                try:
                    row.append(dis.stack_effect(op, a, jump=j))
                except ValueError:
                    row.append(NONE)
            k = NONE
            try:
                if row[0] != NONE:
                    k = dis.stack_effect(op, 256, jump=j) - row[0]
                    for a in probe:
                        if row[a & 255] == NONE or (
                                dis.stack_effect(op, a, jump=j) != row[a & 255] + k * (a >> 8)):
                            k = NONE
                            break
            except ValueError:
                k = NONE
            if not -32767 <= k <= 32767:
                k = NONE
            row = [v if -32767 <= v <= 32767 else NONE for v in row]
            if len(set(row)) == 1:
                out.append("c %d %d %d %d" % (jump, op, k, row[0]))
            else:
                out.append("e %d %d %d %s" % (jump, op, k, array.array("h", row).tobytes().hex()))
    out.append("end")
    sys.stdout.write("\n".join(out) + "\n")


_dump()
