// SPDX-License-Identifier: LGPL-3.0-or-later
//
// The file the LAYOUT_WCC targets apply bodies to (two mirrors, data servers 1 and 2), and
// ff_layout_wcc4 bodies about it written by the client library's encoder
// (tools/client/layout_wcc.hpp): every triple matching, named and numeric owners, empty
// masks, an unknown data server, an attribute outside Table 1, bad times, maximal counts.
#pragma once

#include "client/layout_wcc.hpp"
#include "fuzz_support.hpp"
#include "model/data_files.hpp"
#include "model/deviceid.hpp"

#include <string>
#include <utility>
#include <vector>

namespace fuzz {

inline std::vector<std::uint8_t> fixed_fh(std::uint8_t tag) {
    std::vector<std::uint8_t> fh(28, 0xAB);
    fh.front() = tag;
    fh.back() = tag;
    return fh;
}

inline flexfiles::mds::DataFileMap fixed_file() {
    flexfiles::mds::DataFileMap m;
    m.file_id = 4242;
    m.stripe_unit = 1 << 20;
    for (std::uint32_t mirror : {0u, 1u}) {
        flexfiles::mds::DataFile df;
        df.mirror = mirror;
        df.ds_id = mirror + 1;
        df.deviceid = flexfiles::fleet::make_deviceid(df.ds_id);
        df.fh = fixed_fh(static_cast<std::uint8_t>(0x10 * (mirror + 1)));
        df.name = "df" + std::to_string(mirror);
        df.fencing_uid = 1000001;
        df.fencing_gid = 1000001;
        m.files.push_back(std::move(df));
    }
    return m;
}

namespace wccseed {

namespace client = flexfiles::client;

inline client::Fattr table1(std::uint64_t size, std::int64_t t, std::string owner,
                            std::string group) {
    client::Fattr a;
    a.size = size;
    a.space_used = (size + 4095) / 4096 * 4096;
    a.mode = 0640;
    a.owner = std::move(owner);
    a.owner_group = std::move(group);
    a.time_access = client::NfsTime{t, 0};
    a.time_modify = client::NfsTime{t, 1};
    a.time_metadata = client::NfsTime{t, 2};
    return a;
}

inline client::DataServerWcc entry_for(const flexfiles::mds::DataFile& df, client::Fattr attrs) {
    client::DataServerWcc ds;
    for (std::size_t i = 0; i < ds.deviceid.size(); ++i)
        ds.deviceid[i] = static_cast<char>(df.deviceid[i]);
    ds.fh_versions.push_back(client::FileHandle{std::vector<char>(df.fh.begin(), df.fh.end())});
    ds.attrs = std::move(attrs);
    return ds;
}

inline Bytes encode(const client::FlexLayoutWcc& body) {
    return bytes_of(client::encode_flex_layout_wcc(body));
}

// Named bodies about fixed_file().
inline std::vector<std::pair<std::string, Bytes>> bodies() {
    const flexfiles::mds::DataFileMap file = fixed_file();
    std::vector<std::pair<std::string, Bytes>> out;
    auto both = [&](client::Fattr a0, client::Fattr a1) {
        client::FlexLayoutWcc b;
        b.mirrors.push_back({{entry_for(file.files[0], std::move(a0))}});
        b.mirrors.push_back({{entry_for(file.files[1], std::move(a1))}});
        return b;
    };
    const std::int64_t now = 1'800'000'000;
    out.emplace_back("both_mirrors_numeric",
                     encode(both(table1(1 << 20, now, "1000001", "1000001"),
                                 table1(1 << 20, now, "1000001", "1000001"))));
    out.emplace_back("both_mirrors_named",
                     encode(both(table1(4096, now, "alice@example.org", "staff@example.org"),
                                 table1(8192, now, "nobody@other", "nogroup"))));
    out.emplace_back("wrong_owner_repair",
                     encode(both(table1(1, now, "0", "0"), table1(1, now, "1000001", "7"))));
    {
        client::Fattr size_only;
        size_only.size = 12345;
        out.emplace_back("empty_and_size_only", encode(both(client::Fattr{}, size_only)));
    }
    {
        client::FlexLayoutWcc b = both(table1(1, now, "1", "1"), table1(2, now, "2", "2"));
        b.mirrors[0].data_servers[0].deviceid[0] ^= 0x55; // no such data server
        b.mirrors[1].data_servers[0].fh_versions.insert(
            b.mirrors[1].data_servers[0].fh_versions.begin(),
            client::FileHandle{std::vector<char>(8, 'x')}); // the right one second
        b.mirrors[1].data_servers[0].stateid.seqid = 3;     // not the anonymous stateid
        out.emplace_back("unmatched_triples", encode(b));
    }
    {
        client::Fattr outside = table1(1, now, "1", "1");
        outside.change = 7; // not in Table 1
        out.emplace_back("attribute_outside_table1", encode(both(outside, client::Fattr{})));
    }
    {
        client::Fattr bad = table1(1, now, "1", "1");
        bad.time_modify = client::NfsTime{now, 1'000'000'000}; // nseconds out of range
        bad.time_access = client::NfsTime{-1, 0};
        out.emplace_back("bad_times", encode(both(bad, bad)));
    }
    {
        client::Fattr future = table1(1, now * 4, "1", "1"); // far ahead of the clock
        out.emplace_back("future_ctime", encode(both(future, client::Fattr{})));
    }
    {
        // 32 mirrors of one empty entry each, and one mirror of 32: the decoder's bounds.
        client::FlexLayoutWcc wide;
        for (int i = 0; i < 32; ++i)
            wide.mirrors.push_back({{entry_for(file.files[i % 2], client::Fattr{})}});
        out.emplace_back("max_mirrors", encode(wide));
        client::FlexLayoutWcc deep;
        deep.mirrors.emplace_back();
        for (int i = 0; i < 32; ++i)
            deep.mirrors[0].data_servers.push_back(entry_for(file.files[i % 2], client::Fattr{}));
        out.emplace_back("max_data_servers", encode(deep));
        // One mirror more than the bound (the client's encoder refuses to write it).
        Bytes over = out[out.size() - 2].second;
        const std::size_t mirror_bytes = (over.size() - 4) / 32;
        over.insert(over.end(), over.begin() + 4, over.begin() + 4 + mirror_bytes);
        over[3] = 33;
        out.emplace_back("over_max_mirrors", over);
    }
    out.emplace_back("no_mirrors", encode(client::FlexLayoutWcc{}));
    return out;
}

} // namespace wccseed
} // namespace fuzz
