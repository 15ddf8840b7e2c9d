// SPDX-License-Identifier: LGPL-3.0-or-later
// A data-file map as text (model/map_text.hpp), the value several MDSs on one namespace
// share: the golden form an operator reads, the round trip, and every way a value that the
// encoder would not have written is refused whole (a client, another program or a damaged
// object may have written it).
#include "cmocka_cpp.hpp"
#include "model/map_text.hpp"
#include "model/naming.hpp"

#include <string>

using namespace flexfiles::mds;

namespace {

DataFileMap two_mirrors() {
    DataFileMap m;
    m.file_id = 1234;
    m.stripe_unit = 1048576;
    for (std::uint32_t i = 0; i < 2; i++) {
        DataFile f;
        f.mirror = i;
        f.ds_id = 3 + 2 * i;
        f.deviceid = flexfiles::fleet::make_deviceid(f.ds_id);
        f.fh = {0x01, 0xa2, static_cast<std::uint8_t>(i), 0xff};
        f.name = flexfiles::fleet::data_file_name(0x9f3c0a7b5d2e44e1, m.file_id, i);
        f.fencing_uid = 20001 + i;
        f.fencing_gid = 30001;
        m.files.push_back(f);
    }
    return m;
}

void test_golden(void**) {
    const std::string text = encode_map_text(two_mirrors());
    const std::string dev3 = flexfiles::fleet::deviceid_hex(flexfiles::fleet::make_deviceid(3));
    const std::string expect = "flexfiles-map 1\n"
                               "file 1234 stripe_unit 1048576\n"
                               "mirror 0 ds 3 deviceid " +
                               dev3 +
                               " uid 20001 gid 30001 fh 01a200ff name "
                               "ff-9f3c0a7b5d2e44e1-00000000000004d2-m0\n";
    assert_true(text.starts_with(expect));
}

void test_roundtrip(void**) {
    const DataFileMap m = two_mirrors();
    const ParsedMapText p = parse_map_text(encode_map_text(m));
    assert_true(p.map.has_value());
    assert_true(*p.map == m);
    assert_true(p.error.empty());

    DataFileMap legacy = m; // a name of a store made before identities
    legacy.files[1].name = flexfiles::fleet::legacy_data_file_name(1234, 1);
    legacy.file_id = 0;
    legacy.files[0].fencing_uid = UINT32_MAX;
    const ParsedMapText q = parse_map_text(encode_map_text(legacy));
    assert_true(q.map.has_value());
    assert_true(*q.map == legacy);
}

void expect_refused(const std::string& text, const char* why) {
    const ParsedMapText p = parse_map_text(text);
    if (p.map.has_value())
        print_error("accepted: %s\n", why);
    assert_false(p.map.has_value());
    assert_false(p.error.empty());
}

void test_refuses(void**) {
    const std::string good = encode_map_text(two_mirrors());
    auto replaced = [&](const std::string& from, const std::string& to) {
        std::string s = good;
        s.replace(s.find(from), from.size(), to);
        return s;
    };
    expect_refused("", "empty");
    expect_refused(good.substr(0, good.size() - 1), "no final newline");
    expect_refused(good + "\n", "an empty line after");
    expect_refused(good + "x\n", "trailing garbage");
    expect_refused(replaced("flexfiles-map 1", "flexfiles-map 2"), "another version");
    expect_refused("flexfiles-map 1\nfile 1 stripe_unit 1\n", "no data file");
    expect_refused(replaced("file 1234", "file 01234"), "a leading zero");
    expect_refused(replaced("file 1234", "file -1"), "a negative fileid");
    expect_refused(replaced("file 1234", "file 18446744073709551616"), "a fileid beyond 64 bits");
    expect_refused(replaced("stripe_unit 1048576", "stripe_unit  1048576"), "two spaces");
    expect_refused(replaced("mirror 1", "mirror 0"), "mirrors out of order");
    expect_refused(replaced("mirror 0", "mirror 4294967296"), "mirror beyond 32 bits");
    expect_refused(replaced("fh 01a200ff", "fh 01A200FF"), "uppercase hex");
    expect_refused(replaced("fh 01a200ff", "fh 01a200f"), "odd hex");
    expect_refused(replaced("fh 01a200ff", "fh " + std::string(130, 'a')), "65-byte fh");
    expect_refused(replaced("uid 20001", "gid 20001"), "a field out of place");
    expect_refused(replaced("name ff-9f3c0a7b5d2e44e1-00000000000004d2-m0", "name ../etc/passwd"),
                   "a name no MDS makes");
    expect_refused(replaced("-m0\n", "-m0 \n"), "a trailing space");
    std::string many = "flexfiles-map 1\nfile 1 stripe_unit 1\n";
    for (std::size_t i = 0; i <= kMaxMapTextDataFiles; i++) {
        DataFileMap one = two_mirrors();
        one.files.resize(1);
        std::string line = encode_map_text(one);
        line = line.substr(line.find("mirror"));
        line.replace(0, std::string("mirror 0").size(), "mirror " + std::to_string(i));
        many += line;
    }
    expect_refused(many, "more data files than a map may have");
}

void test_reserved_names(void**) {
    assert_true(is_reserved_xattr_name("flexfiles.map"));
    assert_true(is_reserved_xattr_name("flexfiles.anything"));
    assert_false(is_reserved_xattr_name("flexfiles"));
    assert_false(is_reserved_xattr_name("user.flexfiles.map")); // not how the FSAL spells it
    assert_false(is_reserved_xattr_name("comment"));
    assert_false(is_reserved_xattr_name(""));
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_golden),
        cmocka_unit_test(test_roundtrip),
        cmocka_unit_test(test_refuses),
        cmocka_unit_test(test_reserved_names),
    };
    return cmocka_run_group_tests_name("model_map_text", tests, nullptr, nullptr);
}
