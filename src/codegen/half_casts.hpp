// 16-bit float conversions as the IR's own operations, lowered once for every renderer.
//
// After "16-bit floats as float arithmetic" a float16 or bfloat16 value is only loaded, stored,
// bitcast, a constant or cast. This step leaves each renderer one conversion to spell, the exact
// IEEE one between float16 and float32 (a single instruction where the machine has it: F16C,
// AVX512-FP16, a GPU's cvt), and writes every other cast in integer and float operations:
//  - bfloat16 to float32 is its 16 bits shifted into the top of a float32;
//  - float32 to bfloat16 rounds the low 16 bits to nearest even, a NaN kept quiet;
//  - a cast from any other type to a 16-bit float goes through float64 and is rounded to float32
//    "to odd" (an inexact result keeps its lowest bit set), which makes the second rounding to
//    16 bits exact;
//  - a cast from a 16-bit float to another type goes through float32 (exact).
// So answers are the same whichever renderer, compiler or CPU builds the kernel.
#pragma once

#include "lathe/uop.hpp"

namespace lathe {

/// `ast` with every CAST from or to a 16-bit float, other than float16 <-> float32, written as
/// integer and float operations (vector casts lane by lane).
UOpPtr lower_16bit_casts(const UOpPtr& ast);

}  // namespace lathe
