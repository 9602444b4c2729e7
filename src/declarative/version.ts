/**
 * The plugin API this host implements (spec declarative-plugins.md: plugin API `1.0`): a manifest's `apiVersion`
 * `<major>.<minor>` is accepted when its major is this one (any minor: later minors only add), else the whole plugin
 * is refused (§2: 宿主兼容窗口检查，不匹配整批拒绝).
 */
export const declarativeApiMajor = 1;
/** The window as people read it. */
export const declarativeApiWindow = `${declarativeApiMajor}.x`;
