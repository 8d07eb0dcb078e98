package dev.eddy.config;

import com.typesafe.config.Config;
import java.util.Optional;

/**
 * What the first start creates: an organization, project 1 and a user with an all-scopes personal API key.
 *
 * @param projectToken   fixed project API key ({@code phc_...}); empty generates one
 * @param personalApiKey fixed personal API key ({@code phx_...}); empty generates one
 * @param projectName    name of project 1
 * @param userEmail      e-mail of the first user
 * @param printKeys      whether the start banner shows a configured personal API key in full (a developer's own
 *                       machine); otherwise only the start that creates a key shows it, once
 */
public record BootstrapConfig(Optional<String> projectToken, Optional<String> personalApiKey, String projectName, String userEmail,
                              boolean printKeys) {

    public BootstrapConfig {
        projectToken.ifPresent(t -> Validation.require(t.matches("phc_[A-Za-z0-9_-]{8,60}"),
                "bootstrap.project-token must look like phc_ followed by 8 to 60 letters, digits, '_' or '-'"));
        personalApiKey.ifPresent(k -> Validation.require(k.matches("phx_[A-Za-z0-9_-]{16,100}"),
                "bootstrap.personal-api-key must look like phx_ followed by 16 to 100 letters, digits, '_' or '-'"));
    }

    static BootstrapConfig from(final Config root) {
        final Config c = root.getConfig("bootstrap");
        return new BootstrapConfig(
                nonBlank(c.getString("project-token")),
                nonBlank(c.getString("personal-api-key")),
                c.getString("project-name"),
                c.getString("user-email"),
                c.getBoolean("print-keys"));
    }

    private static Optional<String> nonBlank(final String value) {
        return value.isBlank() ? Optional.empty() : Optional.of(value.trim());
    }

    @Override
    public String toString() {
        return "BootstrapConfig[projectToken=" + projectToken.map(t -> "set").orElse("generated")
                + ", personalApiKey=" + personalApiKey.map(k -> "set").orElse("generated")
                + ", projectName=" + projectName + ", userEmail=" + userEmail + ", printKeys=" + printKeys + "]";
    }
}
