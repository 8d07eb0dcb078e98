package dev.eddy.config;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GeoIpConfigTest {

    @TempDir
    Path dir;

    @Test
    void noDatabaseByDefault() {
        assertThat(ConfigLoader.load(Map.of(), Optional.empty()).geoip().database()).isEmpty();
    }

    @Test
    void environmentNamesTheDatabase() throws IOException {
        final Path mmdb = Files.createFile(dir.resolve("city.mmdb"));

        assertThat(ConfigLoader.environmentName("geoip.database")).isEqualTo("EDDY_GEOIP_DATABASE");
        assertThat(ConfigLoader.load(Map.of("EDDY_GEOIP_DATABASE", mmdb.toString()), Optional.empty()).geoip().database())
                .contains(mmdb);
        assertThat(ConfigLoader.load(Map.of("EDDY_GEOIP_DATABASE", " " + dir + " "), Optional.empty()).geoip().database())
                .as("a directory of .mmdb files, surrounding blanks ignored").contains(dir);
        assertThat(ConfigLoader.load(Map.of("EDDY_GEOIP_DATABASE", "  "), Optional.empty()).geoip().database()).isEmpty();
    }

    @Test
    void fileSetsTheDatabaseAndEnvironmentBeatsIt() throws IOException {
        final Path fromFile = Files.createFile(dir.resolve("file.mmdb"));
        final Path fromEnv = Files.createFile(dir.resolve("env.mmdb"));
        final Path conf = Files.writeString(dir.resolve("eddy.conf"), "geoip.database = \"" + fromFile + "\"");

        assertThat(ConfigLoader.load(Map.of(), Optional.of(conf)).geoip().database()).contains(fromFile);
        assertThat(ConfigLoader.load(Map.of("EDDY_GEOIP_DATABASE", fromEnv.toString()), Optional.of(conf)).geoip().database())
                .contains(fromEnv);
    }

    @Test
    void aMissingDatabaseIsAConfigurationError() {
        assertThatThrownBy(() -> ConfigLoader.load(Map.of("EDDY_GEOIP_DATABASE", dir.resolve("absent.mmdb").toString()),
                Optional.empty()))
                .isInstanceOf(ConfigException.class)
                .hasMessageContaining("geoip.database")
                .hasMessageContaining("absent.mmdb");
    }
}
