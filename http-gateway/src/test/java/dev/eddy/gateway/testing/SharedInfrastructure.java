package dev.eddy.gateway.testing;

import org.junit.jupiter.api.extension.ExtensionContext;
import org.junit.jupiter.api.extension.ParameterContext;
import org.junit.jupiter.api.extension.ParameterResolver;

/**
 * JUnit 5 extension giving test classes the one {@link Infrastructure} of this JVM (started on first use,
 * closed when the JVM's test run ends): declare a parameter of type {@link Infrastructure}.
 */
public final class SharedInfrastructure implements ParameterResolver {

    @Override
    public boolean supportsParameter(final ParameterContext parameter, final ExtensionContext context) {
        return parameter.getParameter().getType() == Infrastructure.class;
    }

    @Override
    public Object resolveParameter(final ParameterContext parameter, final ExtensionContext context) {
        return context.getRoot().getStore(ExtensionContext.Namespace.create(SharedInfrastructure.class))
                .getOrComputeIfAbsent(Infrastructure.class, type -> {
                    try {
                        return Infrastructure.start();
                    } catch (final Exception e) {
                        throw new IllegalStateException("cannot start the test infrastructure", e);
                    }
                }, Infrastructure.class);
    }
}
