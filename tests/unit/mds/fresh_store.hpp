// SPDX-License-Identifier: LGPL-3.0-or-later
// An empty layout store of its own for one test case of the mds tests: <scratch>/<name>.
#pragma once

#include "cmocka_cpp.hpp"
#include "scratch_dir.hpp"
#include "store/layout_store.hpp"

#include <memory>

inline std::unique_ptr<flexfiles::mds::LayoutStore> fresh_store(const std::string& prefix,
                                                                const char* name) {
    const std::filesystem::path dir = scratch_dir(prefix) / name;
    std::filesystem::remove_all(dir);
    auto r = flexfiles::mds::LayoutStore::open((dir / "layouts.db").string());
    assert_true(r.ok());
    return std::move(r.value);
}
