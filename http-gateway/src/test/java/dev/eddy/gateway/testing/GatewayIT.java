package dev.eddy.gateway.testing;

import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Base of the management API tests: one gateway-only Eddy per test class on the shared broker and its own
 * database, in {@link #eddy}. A subclass's own {@code @BeforeAll} runs after it started.
 */
@ExtendWith(SharedInfrastructure.class)
public abstract class GatewayIT {
    @TempDir
    static Path gatewayStateDir;
    protected static TestEddy eddy;

    @BeforeAll
    static void startGateway(final Infrastructure infra) throws Exception {
        eddy = TestEddy.start(infra, gatewayStateDir, Map.of("EDDY_ROLE", "gateway"));
    }

    @AfterAll
    static void stopGateway() {
        if (eddy != null) {
            eddy.close();
            eddy = null;
        }
    }
}
