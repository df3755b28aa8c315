// The payload a compile produces: several objects, packed and unpacked intact;
// anything else is refused rather than handed to the JIT linker.
#include <gtest/gtest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "jit/object_bundle.hpp"

using flyrt::jit::pack_objects;
using flyrt::jit::unpack_objects;

TEST(ObjectBundle, PacksAndUnpacksObjectsWithAnyBytes)
{
    const std::vector<std::string> objects{std::string("\x7f"
                                                       "ELF\0\x01",
                                                       6),
                                           "",
                                           std::string(100000, '\xff')};
    const std::string bundle = pack_objects(objects);
    const std::vector<std::string_view> unpacked = unpack_objects(bundle);
    ASSERT_EQ(unpacked.size(), objects.size());
    for (std::size_t i = 0; i < objects.size(); ++i)
    {
        EXPECT_EQ(std::string(unpacked[i]), objects[i]);
    }
}

TEST(ObjectBundle, RefusesTruncatedAndForeignPayloads)
{
    const std::string bundle = pack_objects({"first object", "second object"});
    EXPECT_THROW(unpack_objects(bundle.substr(0, bundle.size() - 1)), std::runtime_error);
    EXPECT_THROW(unpack_objects(bundle.substr(0, 20)), std::runtime_error);
    EXPECT_THROW(unpack_objects("\x7f"
                                "ELF a bare object"),
                 std::runtime_error);
    EXPECT_THROW(unpack_objects(""), std::runtime_error);
}
