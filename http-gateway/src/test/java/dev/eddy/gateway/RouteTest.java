package dev.eddy.gateway;

import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;

/**
 * Base of the route tests: one {@link RouteTier} per test class (its own database), in {@link #eddy}. A subclass's own
 * {@code @BeforeAll} runs after it started.
 */
public abstract class RouteTest {
    protected static RouteTier eddy;

    @BeforeAll
    static void startRoutes() throws Exception {
        eddy = RouteTier.start(Map.of());
    }

    @AfterAll
    static void stopRoutes() {
        if (eddy != null) {
            eddy.close();
            eddy = null;
        }
    }
}
