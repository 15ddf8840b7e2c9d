// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Data-file namespaces (issue #13, item 1): two FLEXFILES exports of one MDS whose
// namespaces are two fresh tmpfs mounts (so both hand out the same fileids) share the
// same data-server exports. Neither may destroy the other's data files:
//   * a file written in export 1 and then a file of the same fileid created and written in
//     export 2 both keep their bytes, each in data files of its own (the names carry the
//     export's identity), and no create "replaces a leftover";
//   * the MDS warns at start that the two exports name the same data-server exports;
//   * `ganesha-ff exports` shows each export's identity, and every data file of an export
//     carries it.
//
// Cluster: 1 MDS (two FLEXFILES exports over VFS on tmpfs, Protocols 3 and 4, Mirrors = 2)
// + 3 NFSv3 data servers, both exports listing all three; a private dbus daemon.
#include "admin_cli_support.hpp"
#include "mds_test_support.hpp"

#include <cstdlib>
#include <map>
#include <regex>
#include <sys/mount.h>

using namespace mds_test;
namespace admin_cli = flexfiles::admin_cli;

namespace {

// A fresh tmpfs mounted on a folder of its own, unmounted (lazily, should something still
// hold it) and removed when the object goes.
class TmpfsMount {
public:
    explicit TmpfsMount(const fs::path& dir) : dir_(dir) {
        fs::create_directories(dir_);
        mounted_ = ::mount("tmpfs", dir_.c_str(), "tmpfs", 0, "size=64m,mode=0755") == 0;
    }
    ~TmpfsMount() {
        if (mounted_)
            ::umount2(dir_.c_str(), MNT_DETACH);
        std::error_code ec;
        fs::remove_all(dir_, ec);
    }
    TmpfsMount(const TmpfsMount&) = delete;
    TmpfsMount& operator=(const TmpfsMount&) = delete;

    bool mounted() const { return mounted_; }
    const fs::path& dir() const { return dir_; }

private:
    fs::path dir_;
    bool mounted_ = false;
};

std::string hex16(std::uint64_t v) {
    char buf[17];
    std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(v));
    return buf;
}

// Every data file of MDS fileid `fileid` on the data servers, whatever export made it
// (old names "ff-<fileid>-m<m>" and names carrying an identity before the fileid alike):
// data server name + "/" + file name -> its bytes.
std::map<std::string, std::vector<std::uint8_t>> data_files_of(Cluster& c, std::uint64_t fileid) {
    const std::regex name("^ff-([0-9a-f]{16}-)?" + hex16(fileid) + "-m[0-9]+$");
    std::map<std::string, std::vector<std::uint8_t>> out;
    for (unsigned i = 0; i < c.ds_count(); ++i)
        for (const auto& e : fs::directory_iterator(c.ds_info()[i].export_path)) {
            const std::string n = e.path().filename().string();
            if (std::regex_match(n, name))
                out[c.ds_info()[i].name + "/" + n] = read_whole(e.path());
        }
    return out;
}

class HostileNamespace : public ::testing::Test {
protected:
    void SetUp() override {
        ASSERT_EQ(geteuid(), 0u) << "mounting tmpfs needs root";
        char tmpl[] = "/tmp/ff-namespaces-XXXXXX";
        ASSERT_NE(mkdtemp(tmpl), nullptr);
        root_ = tmpl;
        ns1_ = std::make_unique<TmpfsMount>(root_ / "ns1");
        ns2_ = std::make_unique<TmpfsMount>(root_ / "ns2");
        ASSERT_TRUE(ns1_->mounted() && ns2_->mounted()) << "mount -t tmpfs failed";

        ClusterOptions o;
        o.data_servers = 3;
        o.with_dbus = true;
        o.configure_mds = [this](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
            configure_flexfiles_mds(mds, ds, with_mirrors(2));
            mds.exports[0].path = ns1_->dir();
            ExportSpec second = mds.exports[0];
            second.export_id = 2;
            second.path = ns2_->dir();
            second.pseudo = "/export2";
            mds.exports.push_back(second);
        };
        cluster_ = std::make_unique<Cluster>(o);
    }

    void TearDown() override {
        cluster_.reset(); // the MDS lets go of the mounts before they are unmounted
        ns2_.reset();
        ns1_.reset();
        std::error_code ec;
        fs::remove_all(root_, ec);
    }

    CommandResult cli(std::vector<std::string> args) {
        return admin_cli::run(*cluster_->dbus(), std::move(args));
    }

    // `ganesha-ff --json exports`: export id -> identity ("" when not shown).
    std::map<unsigned, std::string> identities() {
        std::map<unsigned, std::string> out;
        for (int attempt = 0; attempt < 100; ++attempt) { // the interface registers late
            const CommandResult r = cli({"--json", "exports"});
            if (r.ok()) {
                const std::regex row(
                    R"re("export_id":\s*(\d+)[^}]*?"identity":\s*"([0-9a-f]*)")re");
                for (auto it = std::sregex_iterator(r.output.begin(), r.output.end(), row);
                     it != std::sregex_iterator(); ++it)
                    out[static_cast<unsigned>(std::stoul((*it)[1]))] = (*it)[2];
                if (out.empty())
                    ADD_FAILURE() << "no identity in `ganesha-ff --json exports`:\n" << r.output;
                return out;
            }
            std::this_thread::sleep_for(100ms);
        }
        ADD_FAILURE() << "the FLEXFILES dbus interface never appeared";
        return out;
    }

    fs::path root_;
    std::unique_ptr<TmpfsMount> ns1_, ns2_;
    std::unique_ptr<Cluster> cluster_;
};

TEST_F(HostileNamespace, TwoExportsOnOneDataServerFleetKeepEachOthersData) {
    GaneshaServer& mds = cluster_->mds();
    // Both exports list the same three data-server exports: the MDS says so, naming both.
    EXPECT_TRUE(mds.log_contains("FLEXFILES exports 1 and 2 both use data-server export"))
        << joined(mds.log_tail(60));

    const std::size_t mark = mds.log_offset();
    Nfs3Client one(mds.nfs3_url(1));
    Nfs3Client two(mds.nfs3_url(2));
    const Created a = create_file(one, "a");
    const auto bytes_a = pattern(70000, 1);
    write_all(one, a.fh, 0, bytes_a);

    const Created b = create_file(two, "b");
    ASSERT_EQ(b.fileid, a.fileid) << "two fresh tmpfs mounts should hand out the same fileid: "
                                     "the test would not exercise a collision";
    const auto bytes_b = pattern(50000, 2);
    write_all(two, b.fh, 0, bytes_b);

    // Export 1's file is intact, and so is export 2's.
    EXPECT_EQ(read_all(one, a.fh, 0, bytes_a.size() + 10), bytes_a);
    EXPECT_EQ(read_all(two, b.fh, 0, bytes_b.size() + 10), bytes_b);
    EXPECT_FALSE(mds.log_contains("leftover data file(s) of the same name", mark))
        << joined(mds.log_tail(60));

    // Four data files of that fileid on the data servers: two mirrors of each export.
    const auto files = data_files_of(*cluster_, a.fileid);
    unsigned of_a = 0, of_b = 0;
    for (const auto& [where, bytes] : files) {
        of_a += bytes == bytes_a ? 1 : 0;
        of_b += bytes == bytes_b ? 1 : 0;
    }
    std::vector<std::string> names;
    for (const auto& f : files)
        names.push_back(f.first);
    EXPECT_EQ(files.size(), 4u) << joined(names);
    EXPECT_EQ(of_a, 2u) << "export 1's mirrors";
    EXPECT_EQ(of_b, 2u) << "export 2's mirrors";

    // Each export's identity, as ganesha-ff shows it, is in the names of its data files.
    const auto ids = identities();
    ASSERT_EQ(ids.size(), 2u);
    ASSERT_EQ(ids.at(1).size(), 16u);
    ASSERT_EQ(ids.at(2).size(), 16u);
    EXPECT_NE(ids.at(1), ids.at(2));
    for (const auto& [where, bytes] : files) {
        const std::string& id = bytes == bytes_a ? ids.at(1) : ids.at(2);
        EXPECT_NE(where.find("/ff-" + id + "-" + hex16(a.fileid) + "-m"), std::string::npos)
            << where << " does not carry its export's identity " << id;
    }

    const auto errors = mds.error_lines();
    EXPECT_TRUE(errors.empty()) << "the MDS logged errors:\n" << joined(errors);
}

} // namespace
