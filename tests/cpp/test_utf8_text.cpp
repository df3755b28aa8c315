#include <gtest/gtest.h>

#include "utf8_text.hpp"

using xflydsl::complete_utf8_prefix;
using xflydsl::sanitize_utf8;

TEST(Utf8Text, AsciiIsComplete)
{
    EXPECT_EQ(complete_utf8_prefix("hello\n"), 6u);
    EXPECT_EQ(complete_utf8_prefix(""), 0u);
}

TEST(Utf8Text, KeepsACharacterSplitAcrossReads)
{
    const std::string euro = "\xE2\x82\xAC"; // U+20AC, three bytes
    EXPECT_EQ(complete_utf8_prefix("ab" + euro.substr(0, 1)), 2u);
    EXPECT_EQ(complete_utf8_prefix("ab" + euro.substr(0, 2)), 2u);
    EXPECT_EQ(complete_utf8_prefix("ab" + euro), 5u);
    const std::string emoji = "\xF0\x9F\x98\x80"; // U+1F600, four bytes
    EXPECT_EQ(complete_utf8_prefix(emoji.substr(0, 3)), 0u);
    EXPECT_EQ(complete_utf8_prefix(emoji), 4u);
}

TEST(Utf8Text, ValidTextIsUnchanged)
{
    const std::string text = "x = 1 \xE2\x82\xAC \xF0\x9F\x98\x80 \xC3\xA9";
    EXPECT_EQ(sanitize_utf8(text), text);
}

TEST(Utf8Text, InvalidBytesBecomeReplacementCharacters)
{
    const std::string replacement = "\xEF\xBF\xBD";
    EXPECT_EQ(sanitize_utf8("a\xFF"
                            "b"),
              "a" + replacement + "b");
    // A lone continuation byte, an overlong '/', and a UTF-16 surrogate.
    EXPECT_EQ(sanitize_utf8("\x80"), replacement);
    EXPECT_EQ(sanitize_utf8("\xC0\xAF"), replacement + replacement);
    EXPECT_EQ(sanitize_utf8("\xED\xA0\x80"), replacement + replacement + replacement);
    // A sequence cut short by the end of the input.
    EXPECT_EQ(sanitize_utf8("ok\xE2\x82"), "ok" + replacement + replacement);
}
