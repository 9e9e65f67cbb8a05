"""Bit instructions for the numba kernels and the compiled searches (one machine instruction
each, which numba does not offer as functions): counting bits, the lowest set bit, and a
float64's bits as an integer and back.

Imported only by compiled code (``envs/*/kernel.py``, ``agents/alphabeta_compiled.py``): it
brings numba and llvmlite in.
"""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.extending import intrinsic

_WORDS = (types.int64, types.uint64)


@intrinsic
def popcount(typingctx, x):  # type: ignore[no-untyped-def]
    """Return the number of set bits of an int64 or uint64 mask (LLVM's ctpop)."""
    if x not in _WORDS:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """Emit LLVM's ctpop."""
        return builder.ctpop(args[0])

    return types.int64(x), codegen


@intrinsic
def lowest_square(typingctx, x):  # type: ignore[no-untyped-def]
    """Return the index of the lowest set bit of a non-zero int64 or uint64 mask (count
    trailing zeros; zero answers 64)."""
    if x not in _WORDS:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """Emit LLVM's cttz (zero input allowed: it answers 64)."""
        return builder.cttz(args[0], ir.Constant(ir.IntType(1), 0))

    return types.int64(x), codegen


@intrinsic
def float_bits(typingctx, x):  # type: ignore[no-untyped-def]
    """Return the IEEE-754 bits of a float64 as a uint64 (so a table of both is one array)."""
    if x != types.float64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """Reinterpret the bits."""
        return builder.bitcast(args[0], ir.IntType(64))

    return types.uint64(types.float64), codegen


@intrinsic
def bits_float(typingctx, x):  # type: ignore[no-untyped-def]
    """Return the float64 whose IEEE-754 bits are the uint64 ``x`` (:func:`float_bits` undone)."""
    if x != types.uint64:
        return None

    def codegen(context, builder, signature, args):  # type: ignore[no-untyped-def]
        """Reinterpret the bits."""
        return builder.bitcast(args[0], ir.DoubleType())

    return types.float64(types.uint64), codegen
