package dev.eddy.topology;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.io.TempDir;

/** Base of the topology tests: a fresh {@link TopologyFixture} (whole topology, own state dir) per test, in {@link #t}. */
public abstract class TopologyTest {
    @TempDir
    Path stateDir;

    protected TopologyFixture t;

    /** Configuration overrides for the fixture, as environment variables. */
    protected Map<String, String> env() {
        return Map.of();
    }

    @BeforeEach
    void startFixture() {
        t = new TopologyFixture(stateDir, env());
    }

    @AfterEach
    void closeFixture() {
        t.close();
    }
}
