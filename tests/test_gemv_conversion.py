"""Deep dive 08d's Triton GEMV converts int8 to fp32 with byte permutes (PTX prmt) instead of the
int-to-float unit. The GPU is not here, so the test reads the kernel's assembly from the
notebook and runs it byte by byte: every int8 value must come out exact."""

import json
import re
import struct

from helpers.records import project_root

NOTEBOOK = project_root() / "notebooks" / "deep-dives" / "08d_weight_only.ipynb"


def kernel_cell() -> str:
    """The conversion's cell and the kernel's, as one source."""
    cells = json.loads(NOTEBOOK.read_text())["cells"]
    ids = ("int8-to-float", "triton-gemv", "triton-gemv-call")
    return "".join("".join(c["source"]) for c in cells if c.get("id") in ids)


def prmt(a: int, b: int, selector: int) -> int:
    """PTX prmt.b32 in its default mode: result byte n is byte (selector >> 4n) & 7 of {b, a}."""
    source = (b << 32) | a
    return sum(((source >> (8 * ((selector >> (4 * n)) & 7))) & 0xFF) << (8 * n) for n in range(4))


def test_the_byte_permute_conversion_is_exact_for_every_int8():
    cell = kernel_cell()
    flip = int(re.search(r"xor\.b32 u, \$4, (0x[0-9A-Fa-f]+);", cell).group(1), 16)
    permutes = re.findall(r"prmt\.b32 \$(\d), u, (0x[0-9A-Fa-f]+), (0x[0-9A-Fa-f]+);", cell)
    offset = float(re.search(r"bitcast=True\) - ([0-9.]+)", cell).group(1))
    assert [int(out) for out, _, _ in permutes] == [0, 1, 2, 3]
    for first in range(-128, 128, 4):  # four int8 in one register, every value once
        values = [first, first + 1, first + 2, first + 3]
        word = int.from_bytes(bytes(v & 0xFF for v in values), "little")
        for lane, (_, magic, selector) in enumerate(permutes):
            bits = prmt(word ^ flip, int(magic, 16), int(selector, 16))
            as_float = struct.unpack("<f", bits.to_bytes(4, "little"))[0]
            assert as_float - offset == values[lane]


def test_fp8_weights_keep_triton_own_conversion():
    cell = kernel_cell()
    assert "INT8=weight.dtype == torch.int8" in cell and "wide = w.to(tl.float32)" in cell
