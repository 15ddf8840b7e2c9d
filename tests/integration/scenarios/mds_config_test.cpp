// SPDX-License-Identifier: LGPL-3.0-or-later
//
// Invalid FLEXFILES export blocks are refused (fsal_flexfiles/config.cpp, export.cpp):
// ganesha.nfsd keeps running without the export, the log names the block and the field,
// and a client cannot mount the export. Also: a Layout_Store that cannot be created
// refuses the export, and a valid block with an explicit Layout_Store puts it there.
//
// Cluster: 2 NFSv3 data servers and an MDS (Protocols 3 and 4) started per case.
#include "mds_test_support.hpp"

using namespace mds_test;

namespace {

struct DsBlock {
    std::string id;      // "" leaves Id out
    std::string address; // "" leaves Address out
    const DataServerInfo* info = nullptr;
};

std::string data_server_block(const DsBlock& b) {
    std::string out = "        Data_Server {\n";
    if (!b.id.empty())
        out += "            Id = " + b.id + ";\n";
    if (!b.address.empty())
        out += "            Address = " + b.address + ";\n";
    out += "            NFS_Port = " + std::to_string(b.info->nfs_port) + ";\n";
    out += "            MNT_Port = " + std::to_string(b.info->mnt_port) + ";\n";
    out += "            Export_Path = " + b.info->export_path.string() + ";\n";
    out += "        }\n";
    return out;
}

// Starts the MDS with a FLEXFILES block made of `mirrors`, the Data_Server blocks that
// `blocks` returns for the cluster's data servers, and `extra` lines.
GaneshaServer&
start_mds(Cluster& cluster, unsigned mirrors,
          std::function<std::vector<DsBlock>(const std::vector<DataServerInfo>&)> blocks,
          const std::string& extra = {}) {
    return cluster.start_mds([&](ServerOptions& mds, const std::vector<DataServerInfo>& ds) {
        mds.protocols = {3, 4};
        mds.exports[0].protocols = {3, 4};
        mds.allow_config_errors = true;
        std::string fsal = "FSAL {\n        Name = FLEXFILES;\n        FSAL { Name = VFS; }\n"
                           "        Mirrors = " +
                           std::to_string(mirrors) + ";\n" + extra;
        for (const DsBlock& b : blocks(ds))
            fsal += data_server_block(b);
        mds.exports[0].fsal = fsal + "    }";
    });
}

ClusterOptions two_data_servers() {
    ClusterOptions o;
    o.data_servers = 2;
    o.start_mds = false;
    return o;
}

// The export is refused: the log says why (each `needle`) and that it was refused, and a
// client cannot mount it, while the server itself runs on.
void expect_refused(GaneshaServer& mds, const std::vector<std::string>& needles) {
    EXPECT_TRUE(mds.running());
    for (const auto& n : needles)
        EXPECT_TRUE(mds.log_contains(n)) << "the log does not say: " << n;
    EXPECT_TRUE(mds.log_contains("export refused"));
    EXPECT_FALSE(mds.log_contains("data server(s) Up")) << "the data path was started";
    EXPECT_THROW(Nfs3Client client(mds.nfs3_url()), std::exception)
        << "the refused export can be mounted";
}

} // namespace

TEST(MdsConfig, MissingAddressRefusesTheExport) {
    Cluster cluster(two_data_servers());
    GaneshaServer& mds = start_mds(cluster, 1, [](const std::vector<DataServerInfo>& ds) {
        return std::vector<DsBlock>{{"1", ds[0].address, &ds[0]}, {"2", "", &ds[1]}};
    });
    expect_refused(mds, {"Data_Server block 2 (Id = 2): Address is missing"});
}

TEST(MdsConfig, MoreMirrorsThanDataServersRefusesTheExport) {
    Cluster cluster(two_data_servers());
    GaneshaServer& mds = start_mds(cluster, 3, [](const std::vector<DataServerInfo>& ds) {
        return std::vector<DsBlock>{{"1", ds[0].address, &ds[0]}, {"2", ds[1].address, &ds[1]}};
    });
    expect_refused(mds, {"Mirrors = 3 exceeds the number of Data_Server blocks (2)"});
}

TEST(MdsConfig, DuplicateIdRefusesTheExport) {
    Cluster cluster(two_data_servers());
    GaneshaServer& mds = start_mds(cluster, 1, [](const std::vector<DataServerInfo>& ds) {
        return std::vector<DsBlock>{{"7", ds[0].address, &ds[0]}, {"7", ds[1].address, &ds[1]}};
    });
    expect_refused(mds, {"Data_Server block 2 (Id = 7): Id = 7 is already used by Data_Server "
                         "block 1"});
}

TEST(MdsConfig, DuplicateAddressRefusesTheExport) {
    Cluster cluster(two_data_servers());
    GaneshaServer& mds = start_mds(cluster, 1, [](const std::vector<DataServerInfo>& ds) {
        return std::vector<DsBlock>{{"1", ds[0].address, &ds[0]}, {"2", ds[0].address, &ds[1]}};
    });
    expect_refused(mds, {"Data_Server block 2 (Id = 2): Address:NFS_Port " +
                         cluster.ds_info()[0].address +
                         ":2049 is already used by Data_Server "
                         "block 1 (Id = 1)"});
}

TEST(MdsConfig, EveryProblemIsReportedAtOnce) {
    Cluster cluster(two_data_servers());
    GaneshaServer& mds = start_mds(cluster, 3, [](const std::vector<DataServerInfo>& ds) {
        return std::vector<DsBlock>{{"1", ds[0].address, &ds[0]}, {"1", "", &ds[1]}};
    });
    expect_refused(mds, {"Address is missing", "Id = 1 is already used",
                         "Mirrors = 3 exceeds the number of Data_Server blocks (2)",
                         "3 configuration error(s), export refused"});
}

TEST(MdsConfig, UnusableLayoutStoreRefusesTheExport) {
    Cluster cluster(two_data_servers());
    const fs::path blocker = cluster.dir() / "not-a-folder";
    { std::ofstream(blocker) << "a file where the store's folder should be\n"; }
    GaneshaServer& mds = start_mds(
        cluster, 1,
        [](const std::vector<DataServerInfo>& ds) {
            return std::vector<DsBlock>{{"1", ds[0].address, &ds[0]}};
        },
        "        Layout_Store = " + (blocker / "layouts.db").string() + ";\n");
    expect_refused(mds, {"layout store " + (blocker / "layouts.db").string(),
                         "export refused (Layout_Store)"});
}

TEST(MdsConfig, RelativeLayoutStoreRefusesTheExport) {
    Cluster cluster(two_data_servers());
    GaneshaServer& mds = start_mds(
        cluster, 1,
        [](const std::vector<DataServerInfo>& ds) {
            return std::vector<DsBlock>{{"1", ds[0].address, &ds[0]}};
        },
        "        Layout_Store = \"relative/layouts.db\";\n");
    expect_refused(mds, {"Layout_Store = \"relative/layouts.db\" is not an absolute path"});
}

// A valid block: the export serves, its store is where Layout_Store says.
TEST(MdsConfig, ExplicitLayoutStoreIsUsed) {
    Cluster cluster(two_data_servers());
    const fs::path store = cluster.dir() / "stores" / "mds-layouts.db";
    GaneshaServer& mds = start_mds(
        cluster, 2,
        [](const std::vector<DataServerInfo>& ds) {
            return std::vector<DsBlock>{{"1", ds[0].address, &ds[0]}, {"2", ds[1].address, &ds[1]}};
        },
        "        Layout_Store = " + store.string() + ";\n");
    EXPECT_FALSE(mds.log_contains("export refused"));
    EXPECT_TRUE(mds.log_contains("layout store " + store.string()));
    EXPECT_TRUE(fs::exists(store));
    Nfs3Client client(mds.nfs3_url());
    const Created f = create_file(client, "stored");
    write_all(client, f.fh, 0, pattern(2000, 1));
    EXPECT_EQ(read_all(client, f.fh, 0, 2000), pattern(2000, 1));
    EXPECT_EQ(data_files_on_disk(cluster, f.fileid).size(), 2U);
    EXPECT_TRUE(mds.config_errors().empty());
}
