// The report's and the dashboard's scripts: plain browser JavaScript, no build step.
import js from "@eslint/js";
import globals from "globals";

export default [
  js.configs.recommended,
  {
    files: ["**/*.js"],
    languageOptions: {
      ecmaVersion: 2022,
      sourceType: "script",
      globals: { ...globals.browser, SR: "readonly" }, // SR: defined by the dashboard's common.js
    },
    rules: {
      "no-unused-vars": ["error", { args: "none", caughtErrors: "none" }],
      eqeqeq: ["error", "always"],
      "no-implicit-globals": "error",
      // the pages must never build markup from strings: model output is untrusted
      "no-restricted-properties": [
        "error",
        { property: "innerHTML", message: "use textContent or DOM nodes (untrusted text)" },
        { property: "outerHTML", message: "use DOM nodes (untrusted text)" },
      ],
      "no-restricted-syntax": [
        "error",
        {
          selector: "CallExpression[callee.property.name='insertAdjacentHTML']",
          message: "use DOM nodes (untrusted text)",
        },
      ],
    },
  }
];
