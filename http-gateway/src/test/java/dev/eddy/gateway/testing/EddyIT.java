package dev.eddy.gateway.testing;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Base of the end-to-end tests: one whole Eddy (gateway and a streams instance) per test class on the shared broker
 * and its own database, in {@link #eddy}. A subclass's own {@code @BeforeAll} runs after it started.
 */
@ExtendWith(SharedInfrastructure.class)
public abstract class EddyIT {
    @TempDir
    static Path eddyStateDir;
    protected static TestEddy eddy;

    @BeforeAll
    static void startEddy(final Infrastructure infra) throws Exception {
        eddy = TestEddy.start(infra, eddyStateDir, Map.of());
    }

    @AfterAll
    static void stopEddy() {
        if (eddy != null) {
            eddy.close();
            eddy = null;
        }
    }
}
