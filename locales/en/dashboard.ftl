# dashboard
# The same ids, with the same variables, in locales/fr and locales/en (src/i18n/catalogue.rs tests).
