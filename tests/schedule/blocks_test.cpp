// The blocks values are stored in follow the Target: its vector registers of float32 lanes (a
// register, half or two of them, a cache line), whatever this CPU is.
#include <gtest/gtest.h>

#include "schedule/blocks.hpp"

namespace lathe {
namespace {

Blocks blocks_of(int vector_bytes) {
  Target t;
  t.vector_bytes = vector_bytes;
  return blocks_for(t);
}

TEST(Blocks, OneRegisterOfFloat32Lanes) {
  EXPECT_EQ(blocks_of(64).lanes, 16);
  EXPECT_EQ(blocks_of(32).lanes, 8);
  EXPECT_EQ(blocks_of(16).lanes, 4);
  EXPECT_EQ(blocks_of(8).lanes, 0) << "two lanes: nothing is stored in blocks";
  EXPECT_EQ(blocks_of(4).lanes, 0);
}

// Two registers, one, or half of one: the widest that divides the channels.
TEST(Blocks, OutputChannelsTwoRegistersOneOrHalf) {
  Blocks wide = blocks_of(64), avx2 = blocks_of(32), none = blocks_of(8);
  EXPECT_EQ(wide.output_channels(64), 32);
  EXPECT_EQ(wide.output_channels(48), 16);
  EXPECT_EQ(wide.output_channels(24), 8);
  EXPECT_EQ(wide.output_channels(12), 0);
  EXPECT_EQ(wide.output_channels(1), 0);
  EXPECT_EQ(avx2.output_channels(64), 16);
  EXPECT_EQ(avx2.output_channels(24), 8);
  EXPECT_EQ(avx2.output_channels(12), 4);
  EXPECT_EQ(avx2.output_channels(6), 0);
  EXPECT_EQ(none.output_channels(64), 0);
  EXPECT_EQ(none.stored(64), 0);
}

// A convolution's input: a 64-byte cache line of float32 where it divides the channels (two
// registers at 8 lanes, four at 4), else one register.
TEST(Blocks, ConvolutionInputACacheLineOrOneRegister) {
  Blocks wide = blocks_of(64), avx2 = blocks_of(32), sse = blocks_of(16), none = blocks_of(8);
  EXPECT_EQ(wide.convolution_input(64), 16);
  EXPECT_EQ(wide.convolution_input(48), 16);
  EXPECT_EQ(avx2.convolution_input(64), 16);
  EXPECT_EQ(avx2.convolution_input(48), 16);
  EXPECT_EQ(avx2.convolution_input(40), 8) << "16 does not divide 40";
  EXPECT_EQ(sse.convolution_input(32), 16);
  EXPECT_EQ(sse.convolution_input(12), 4);
  EXPECT_EQ(none.convolution_input(64), 0);
}

// An activation a depthwise convolution or a max pool reads: a cache line as a convolution's input
// where it divides the channels, else one register, or half of one.
TEST(Blocks, ActivationsALineOneRegisterOrHalf) {
  Blocks wide = blocks_of(64), avx2 = blocks_of(32), none = blocks_of(8);
  EXPECT_EQ(wide.activations(64), 16) << "never two registers";
  EXPECT_EQ(avx2.activations(64), 16) << "a line";
  EXPECT_EQ(wide.activations(24), 8);
  EXPECT_EQ(wide.activations(12), 0);
  EXPECT_EQ(avx2.activations(24), 8);
  EXPECT_EQ(avx2.activations(12), 4);
  EXPECT_EQ(avx2.activations(6), 0);
  EXPECT_EQ(none.activations(64), 0);
}

// Channels no register divides are padded to whole registers when that adds at most an eighth;
// where two registers make a cache line (8 lanes or fewer), to blocks of two registers first.
TEST(Blocks, StoredPadsToARegisterByAtMostAnEighth) {
  Blocks wide = blocks_of(64), avx2 = blocks_of(32);
  EXPECT_EQ(wide.stored(1000), 16) << "1000 classes: 1008";
  EXPECT_EQ(wide.stored(136), 16);
  EXPECT_EQ(wide.stored(40), 8) << "48 would add a fifth";
  EXPECT_EQ(wide.stored(100), 16) << "112 adds 12%, under an eighth";
  EXPECT_EQ(wide.stored(20), 0) << "32 would add 60%, and no half register divides 20";
  EXPECT_EQ(wide.stored(130), 16);
  EXPECT_EQ(wide.stored(7), 0) << "fewer channels than one register";
  EXPECT_EQ(avx2.stored(1000), 16) << "1008: 63 blocks of two registers";
  EXPECT_EQ(avx2.stored(100), 16) << "112 adds 12%";
  EXPECT_EQ(avx2.stored(104), 16) << "RegNet-Y's 104 channels: 112, 7 blocks of 16 rather than 13 of 8";
  EXPECT_EQ(avx2.stored(440), 16);
  EXPECT_EQ(avx2.stored(72), 16) << "80 adds 11%";
  EXPECT_EQ(avx2.stored(40), 8) << "48 would add a fifth: one register divides 40";
  EXPECT_EQ(avx2.stored(96), 16);
  EXPECT_EQ(avx2.stored(460), 8) << "58 registers, an even count: 464 in blocks of one";
  EXPECT_EQ(avx2.stored(230), 16) << "29 registers: 240 in blocks of two";
  EXPECT_EQ(blocks_of(16).stored(260), 8) << "4 lanes: 264 in blocks of two registers";
  EXPECT_EQ(blocks_of(16).stored(12), 4) << "16 would add a third";
  EXPECT_EQ(avx2.stored(12), 4) << "16 would add a third: half a register";
  EXPECT_EQ(avx2.stored(65), 8);
  EXPECT_EQ(avx2.stored(9), 0);
}

}  // namespace
}  // namespace lathe
