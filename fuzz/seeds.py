#!/usr/bin/env python3
"""Writes seed inputs for the fuzz targets from real clang-19 programs (tests/c):

- device_image: each program's `.llvm.offloading` section (an OffloadBinary) and the device
  ELF inside it;
- entry_table: each program's `omp_offloading_entries` section (clang 19's 32-byte entries),
  and the same entries in LLVM 20's 56-byte layout;
- map_args: the `.offload_sizes` / `.offload_maptypes` arrays of each construct in the
  program's LLVM IR, in the map_args target's input format.

Usage: fuzz/seeds.py OUT_DIR [program.c ...]   (default: a selection of tests/c)
"""
import os
import re
import struct
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEFAULT = [
    "declare_target_global.c", "declare_mapper.c", "i3_member_of_partial.c",
    "async_nowait.c", "api_alloc_memcpy.c", "firstprivate_struct.c", "i3_always_close.c",
    "i3_absent_at_exit.c", "i3_implicit_pointer.c", "i3_mapper_nested.c", "cpp_class.cpp",
    "i3_declare_target_link.c", "divergence_strided_update.c", "i3_associate_hold.c",
]
CFLAGS = ["-fopenmp", "-fopenmp-targets=x86_64-pc-linux-gnu", "-O1"]
# Map-type bits in the order of the map_args target's BITS table.
BITS = [0x1, 0x2, 0x4, 0x8, 0x10, 0x20, 0x40, 0x80, 0x100, 0x200, 0x400, 0x1000, 0x2000]


def section(binary, name):
    with tempfile.NamedTemporaryFile() as out:
        subprocess.run(["objcopy", "-O", "binary", f"--only-section={name}", binary, out.name],
                       check=True)
        return open(out.name, "rb").read()


def inner_images(ob):
    """The images of concatenated OffloadBinaries (header: magic, version, size,
    entry offset, entry size; entry: kind, flags, string offset, count, image offset, size)."""
    out = []
    while len(ob) >= 32 and ob[:4] == b"\x10\xff\x10\xad":
        size, entry_off = struct.unpack_from("<QQ", ob, 8)
        img_off, img_size = struct.unpack_from("<QQ", ob, entry_off + 24)
        out.append(ob[img_off:img_off + img_size])
        ob = ob[size:]
        pad = 0
        while pad < 7 and ob[pad:pad + 1] == b"\0":
            pad += 1
        ob = ob[pad:]
    return out


def to_v20(entries32):
    """clang 19 entries -> LLVM 20 EntryTy (reserved, version, kind, flags, address, name,
    size, data, aux)."""
    out = b""
    for i in range(0, len(entries32) - len(entries32) % 32, 32):
        addr, name, size, flags, data = struct.unpack_from("<QQQiI", entries32, i)
        out += struct.pack("<QHHIQQQQQ", 0, 1, 1, flags & 0xFFFFFFFF, addr, name or 1, size,
                           data, 0)
    return out


def map_args_seeds(ir):
    arrays = {}
    for kind, n, values in re.findall(
            r"@\.offload_(sizes|maptypes)\.(\d+) = private unnamed_addr constant \[\d+ x i64\] \[([^\]]*)\]",
            ir):
        arrays[(kind, int(n))] = [int(v.split()[1]) for v in values.split(",")]
    constructs = []
    for (kind, n), types in sorted(arrays.items()):
        if kind != "maptypes":
            continue
        sizes = arrays.get(("sizes", n - 1), [8] * len(types))
        if len(sizes) != len(types):
            sizes = [8] * len(types)
        items = b""
        for j, (size, ty) in enumerate(zip(sizes, types)):
            bits = sum(1 << b for b, bit in enumerate(BITS) if ty & bit)
            parent = (ty >> 48) & 0xFF
            begin = (16 * j) % 256
            base = begin // 4 if ty & 0x10 else begin
            items += struct.pack("<BBbHB", base, begin, max(-128, min(127, size)), bits, parent)
        target = any(ty & 0x20 for ty in types)
        to = any(ty & 0x1 for ty in types)
        kind_byte = 3 if target else (0 if to else 1)
        constructs.append(bytes([kind_byte, len(types) % 9]) + items[:6 * (len(types) % 9)])
    # One input per construct and one with all of them (first model, no fault).
    seeds = [bytes([0, 0]) + c for c in constructs]
    if constructs:
        seeds.append(bytes([3, 0]) + b"".join(constructs[:16]))
    return seeds


def main():
    out = sys.argv[1]
    programs = sys.argv[2:] or [os.path.join(ROOT, "tests/c", p) for p in DEFAULT]
    for target in ("device_image", "entry_table", "map_args"):
        os.makedirs(os.path.join(out, target), exist_ok=True)

    def write(target, name, data):
        if data:
            open(os.path.join(out, target, name), "wb").write(data)

    with tempfile.TemporaryDirectory() as tmp:
        for src in programs:
            stem = os.path.splitext(os.path.basename(src))[0]
            cc = "clang++-19" if src.endswith(".cpp") else "clang-19"
            exe = os.path.join(tmp, stem)
            subprocess.run([cc, *CFLAGS, src, "-o", exe], check=True, capture_output=True)
            ob = section(exe, ".llvm.offloading")
            write("device_image", f"{stem}.offload", ob)
            for k, img in enumerate(inner_images(ob)):
                write("device_image", f"{stem}.{k}.elf", img)
            entries = section(exe, "omp_offloading_entries")
            write("entry_table", f"{stem}.e32", entries)
            write("entry_table", f"{stem}.e56", to_v20(entries))
            ir = subprocess.run([cc, *CFLAGS, "-S", "-emit-llvm", src, "-o", "-"], check=True,
                                capture_output=True, text=True).stdout
            for k, seed in enumerate(map_args_seeds(ir)):
                write("map_args", f"{stem}.{k}", seed)


if __name__ == "__main__":
    main()
