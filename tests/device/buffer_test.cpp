#include <gtest/gtest.h>

#include "device/device_scope.hpp"
#include "lathe/lathe.hpp"

namespace lathe {
namespace {

TEST(Buffer, MemoryIsAllocatedOnFirstUseAndAligned) {
  Buffer b(dtypes::float32, 100);
  EXPECT_FALSE(b.is_allocated());
  EXPECT_EQ(b.nbytes(), 400u);
  void* p = b.data();
  EXPECT_TRUE(b.is_allocated());
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
  EXPECT_EQ(b.data(), p);
}

TEST(Buffer, CopiesOfTheHandleShareMemory) {
  Buffer a(dtypes::int32, 4);
  Buffer b = a;
  std::vector<int32_t> v{1, 2, 3, 4};
  a.copyin(v.data(), 16);
  EXPECT_EQ(b.to_vector<int32_t>(), v);
  EXPECT_EQ(a.id(), b.id());
  EXPECT_NE(Buffer(dtypes::int32, 4).id(), a.id());
}

TEST(Buffer, ViewsShareTheBaseWithoutCopying) {
  Buffer base(dtypes::float32, 8);
  std::vector<float> v{0, 1, 2, 3, 4, 5, 6, 7};
  base.copyin(v.data(), v.size() * 4);
  Buffer view = Buffer::view(base, 4 * 4, 3, dtypes::float32);
  EXPECT_TRUE(view.is_view());
  EXPECT_EQ(view.to_vector<float>(), (std::vector<float>{4, 5, 6}));
  std::vector<float> w{9, 9, 9};
  view.copyin(w.data(), 12);
  EXPECT_EQ(base.to_vector<float>()[5], 9.0f);
  EXPECT_EQ(static_cast<char*>(view.data()) - static_cast<char*>(base.data()), 16);
  EXPECT_THROW(Buffer::view(base, 4 * 6, 3, dtypes::float32), Error);
}

TEST(Buffer, WrongSizesAndTypesAreRejected) {
  Buffer b(dtypes::float32, 4);
  std::vector<float> three{1, 2, 3};
  try {
    b.copyin(three.data(), 12);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("copyin of 12 bytes into a buffer of 16 bytes"), std::string::npos) << e.what();
  }
  EXPECT_THROW(b.to_vector<int32_t>(), DTypeError);
  EXPECT_THROW(Buffer(dtypes::index, 4), DTypeError);
}

TEST(Buffer, ZeroSizedBuffersWork) {
  Buffer b(dtypes::float32, 0);
  EXPECT_NE(b.data(), nullptr);
  EXPECT_TRUE(b.to_vector<float>().empty());
}

TEST(Allocator, FreedMemoryIsReused) {
  size_t n = (1 << 20) + 17;  // a size no other test uses
  void* first;
  {
    Buffer b(dtypes::float32, n);
    first = b.data();
  }
  AllocatorStats before = allocator_stats();
  Buffer again(dtypes::float32, n);
  EXPECT_EQ(again.data(), first);
  AllocatorStats after = allocator_stats();
  EXPECT_EQ(after.reuses, before.reuses + 1);
  EXPECT_EQ(after.allocations, before.allocations);
}

// Buffers of 4 MiB and more sit on 2 MiB boundaries (huge pages where the kernel gives them): every
// byte usable, freed and reused like any other, whatever the size's remainder.
TEST(Allocator, LargeBuffersAreWholeAlignedAndReused) {
  for (size_t n : {size_t{(4 << 20) / 4}, size_t{(5 << 20) / 4 + 13}, size_t{(9 << 20) / 4 + 1}}) {
    void* first;
    {
      Buffer b(dtypes::int32, n);
      int32_t* p = static_cast<int32_t*>(b.data());
      first = p;
      EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % (2 << 20), 0u) << n;
      for (size_t i = 0; i < n; ++i) p[i] = static_cast<int32_t>(i * 7);
      int64_t wrong = 0;
      for (size_t i = 0; i < n; ++i) wrong += p[i] != static_cast<int32_t>(i * 7);
      EXPECT_EQ(wrong, 0) << n;
    }
    Buffer again(dtypes::int32, n);
    EXPECT_EQ(again.data(), first) << n;
  }
}

TEST(Buffer, ReleaseGivesMemoryBackAndReallocatesOnUse) {
  Buffer b(dtypes::float32, 16);
  b.data();
  b.release();
  EXPECT_FALSE(b.is_allocated());
  EXPECT_NE(b.data(), nullptr);
}

TEST(Buffer, BorrowedMemoryIsSharedAndItsOwnerLivesAsLongAsAHandle) {
  auto values = std::make_shared<std::vector<float>>(std::vector<float>{1, 2, 3, 4, 5});
  std::weak_ptr<std::vector<float>> watch = values;
  Buffer b = Buffer::borrow(values->data(), dtypes::float32, 5, values);
  float* seen = values->data();
  values.reset();  // the lender's own reference gone: the buffer's keeps the memory
  EXPECT_FALSE(watch.expired());
  EXPECT_TRUE(b.is_allocated());
  EXPECT_EQ(b.data(), seen);
  seen[2] = 30;  // written through the lender's address: read by the buffer
  EXPECT_EQ(b.to_vector<float>(), (std::vector<float>{1, 2, 30, 4, 5}));
  Buffer v = Buffer::view(b, 4, 2, dtypes::float32);
  EXPECT_EQ(v.data(), seen + 1);  // the view reads the lender's memory too
  b.release();  // not lathe's memory: left alone
  EXPECT_EQ(b.data(), seen);
  b = Buffer();
  EXPECT_FALSE(watch.expired()) << "a view holds its borrowed base";
  EXPECT_EQ(v.to_vector<float>(), (std::vector<float>{2, 30}));
  v = Buffer();
  EXPECT_TRUE(watch.expired());
}

TEST(Buffer, BorrowRefusesMisalignedNullAndOwnerlessMemory) {
  auto bytes = std::make_shared<std::vector<uint8_t>>(64);
  EXPECT_THROW(Buffer::borrow(bytes->data() + 1, dtypes::float32, 4, bytes), Error);
  EXPECT_THROW(Buffer::borrow(nullptr, dtypes::float32, 4, bytes), Error);
  EXPECT_THROW(Buffer::borrow(bytes->data(), dtypes::float32, 4, nullptr), Error);
  Buffer empty = Buffer::borrow(nullptr, dtypes::float32, 0, bytes);
  EXPECT_EQ(empty.size(), 0u);
  EXPECT_TRUE(empty.to_vector<float>().empty());
  Buffer odd = Buffer::borrow(bytes->data() + 1, dtypes::uint8, 3, bytes);  // one-byte elements: any address
  EXPECT_EQ(odd.size(), 3u);
}

TEST(Buffer, BorrowedMemoryIsTheHostsWhateverTheDefaultDevice) {
  auto values = std::make_shared<std::vector<float>>(4, 1.0f);
  DefaultDeviceScope elsewhere(DeviceSpec::parse("EMU"));
  EXPECT_EQ(Buffer(dtypes::float32, 4).device().to_string(), "EMU:0");
  EXPECT_EQ(Buffer::borrow(values->data(), dtypes::float32, 4, values).device().to_string(), "CPU");
  EXPECT_EQ(Buffer::borrow(values->data(), dtypes::float32, 4, values, DeviceSpec::parse("EMU")).device().to_string(), "EMU:0");
}

TEST(Buffer, ASizeWhoseBytesOverflowIsRefused) {
  EXPECT_THROW(Buffer(dtypes::float32, size_t{1} << 62), Error);
  EXPECT_NO_THROW(Buffer(dtypes::float32, size_t{1} << 40));  // allocated on first use only
}

TEST(DeviceSpec, ParsesAndRejects) {
  EXPECT_EQ(DeviceSpec::parse("cpu").to_string(), "CPU");
  EXPECT_EQ(DeviceSpec::parse("CUDA:1").to_string(), "CUDA:1");
  EXPECT_EQ(DeviceSpec::parse("CUDA:1").index, 1);
  EXPECT_THROW(DeviceSpec::parse("TPU"), Error);
  EXPECT_THROW(DeviceSpec::parse("CUDA:x"), Error);
}

}  // namespace
}  // namespace lathe
