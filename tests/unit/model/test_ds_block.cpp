// SPDX-License-Identifier: LGPL-3.0-or-later
// The Data_Server block AddDataServer takes (fsal_flexfiles/mgmt/ds_block.hpp).
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include <cmocka.h>
}
// cmocka's fail() macro would rename std::ios::fail.
#undef fail
#define fail_here() _fail(__FILE__, __LINE__)

#include "model/ds_block.hpp"

#include <string>

using flexfiles::config::DataServer;
using flexfiles::mgmt::parse_data_server_block;

namespace {

DataServer parsed(const char* text) {
    auto r = parse_data_server_block(text);
    if (const auto* err = std::get_if<std::string>(&r)) {
        print_error("unexpected error for \"%s\": %s\n", text, err->c_str());
        fail_here();
    }
    return std::get<DataServer>(r);
}

// The error message for `text`, which must not parse.
std::string error(const char* text) {
    auto r = parse_data_server_block(text);
    if (!std::holds_alternative<std::string>(r)) {
        print_error("\"%s\" parsed\n", text);
        fail_here();
    }
    return std::get<std::string>(r);
}

void contains(const std::string& haystack, const char* needle) {
    if (haystack.find(needle) == std::string::npos) {
        print_error("\"%s\" does not contain \"%s\"\n", haystack.c_str(), needle);
        fail_here();
    }
}

void pairs_with_defaults(void**) {
    const DataServer ds = parsed("Id = 4; Address = 10.0.0.4; Export_Path = /srv/ds4");
    assert_int_equal(ds.id, 4);
    assert_string_equal(ds.address.c_str(), "10.0.0.4");
    assert_string_equal(ds.export_path.c_str(), "/srv/ds4");
    // The configuration file's defaults.
    assert_int_equal(ds.nfs_port, 2049);
    assert_int_equal(ds.mnt_port, 20048);
    assert_int_equal(ds.rsize, 1u << 20);
    assert_int_equal(ds.wsize, 1u << 20);
}

void block_syntax_quotes_case_and_newlines(void**) {
    const DataServer ds = parsed("Data_Server {\n  id = 7\n  ADDRESS = \"::1\";\n"
                                 "  export_path = \"/a;b\"; NFS_Port = 3049; mnt_port = 3048;\n"
                                 "  Rsize = 65536; Wsize = 131072;\n}");
    assert_int_equal(ds.id, 7);
    assert_string_equal(ds.address.c_str(), "::1");
    assert_string_equal(ds.export_path.c_str(), "/a;b");
    assert_int_equal(ds.nfs_port, 3049);
    assert_int_equal(ds.mnt_port, 3048);
    assert_int_equal(ds.rsize, 65536);
    assert_int_equal(ds.wsize, 131072);
    assert_int_equal(parsed("{ Id = 1; Address = 1.2.3.4; Export_Path = /x; }").id, 1);
}

void errors_name_the_problem(void**) {
    contains(error(""), "empty");
    contains(error("Id = 4; Bogus = 1"), "unknown key Bogus");
    contains(error("Id = 4; id = 5"), "id is given twice");
    contains(error("Id = four"), "Id = \"four\" is not a number");
    contains(error("Id = -1"), "is not a number");
    contains(error("NFS_Port = 70000"), "NFS_Port = 70000 is out of range (0..65535)");
    contains(error("Id = 99999999999"), "out of range");
    contains(error("Id 4"), "is not a Key = Value pair");
    contains(error("= 4"), "has no key");
    contains(error("Address = \"1.2.3.4"), "no closing '\"'");
    contains(error("Data_Server Id = 4"), "expected '{'");
    contains(error("Data_Server { Id = 4"), "no closing '}'");
    contains(error("Address = 1.2\"3\""), "misplaced");
}

} // namespace

int main() {
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(pairs_with_defaults),
        cmocka_unit_test(block_syntax_quotes_case_and_newlines),
        cmocka_unit_test(errors_name_the_problem),
    };
    return cmocka_run_group_tests(tests, nullptr, nullptr);
}
