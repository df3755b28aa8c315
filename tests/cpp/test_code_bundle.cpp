// The payload a compile produces: host objects and device images, packed and
// unpacked intact; anything else is refused rather than handed to the JIT
// linker or a GPU driver.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "jit/code_bundle.hpp"

using flyrt::jit::compiled_code;
using flyrt::jit::device_image;
using flyrt::jit::pack;
using flyrt::jit::unpack;

TEST(CodeBundle, PacksAndUnpacksObjectsAndImagesWithAnyBytes)
{
    compiled_code code;
    code.host_objects = {std::string("\x7f"
                                     "ELF\0\x01",
                                     6),
                         "",
                         std::string(100000, '\xff')};
    code.images.push_back(device_image{"k",
                                       ".version 8.0\n.target sm_90\n",
                                       std::string("\x7f"
                                                   "ELF\0cubin",
                                                   10),
                                       {"index {} of '{}'", ""},
                                       7,
                                       {{64, 2, 1}}});
    code.images.push_back(device_image{"empty", "", "", {}, 0, {{0, 0, 0}}});
    code.host_digests = {std::string(32, '\x01'), "", std::string(32, '\x02')};
    code.images[0].digest = std::string(32, '\x03');
    const compiled_code back = unpack(pack(code));
    ASSERT_EQ(back.host_objects, code.host_objects);
    EXPECT_EQ(back.host_digests, code.host_digests); // the memo's keys, for a warm start's later compiles
    EXPECT_EQ(back.images[0].digest, code.images[0].digest);
    EXPECT_EQ(back.images[1].digest, "");
    ASSERT_EQ(back.images.size(), 2u);
    EXPECT_EQ(back.images[0].kernel, "k");
    EXPECT_EQ(back.images[0].code, code.images[0].code);
    EXPECT_EQ(back.images[0].binary, code.images[0].binary); // a cubin's zero bytes kept
    EXPECT_EQ(back.images[0].reports, code.images[0].reports);
    EXPECT_EQ(back.images[0].parameters, 7u);
    EXPECT_EQ(back.images[0].known_block, (std::array<std::int32_t, 3>{{64, 2, 1}}));
    EXPECT_EQ(back.images[1].kernel, "empty");
    EXPECT_TRUE(back.images[1].reports.empty());
}

TEST(CodeBundle, RefusesTruncatedAndForeignPayloads)
{
    compiled_code code;
    code.host_objects = {"first object", "second object"};
    code.images.push_back(device_image{"k", "ptx", "", {"message"}, 1, {{0, 0, 0}}});
    const std::string bundle = pack(code);
    for (std::size_t cut : {bundle.size() - 1, std::size_t(20), std::size_t(13)})
    {
        EXPECT_THROW(unpack(bundle.substr(0, cut)), std::runtime_error) << cut;
    }
    EXPECT_THROW(unpack(bundle + "x"), std::runtime_error);
    EXPECT_THROW(unpack("\x7f"
                        "ELF a bare object"),
                 std::runtime_error);
    EXPECT_THROW(unpack(""), std::runtime_error);
}
