//! The options that pick sessions and days, shared by `usage`, `grep` and `tools`.

use session_scan::days::DayRange;

#[derive(clap::Args)]
pub struct SessionFilter {
    /// Only sessions whose project (the header's cwd) contains this text. What a session of
    /// another project did first (a copy in a fork or clone) is counted there, not here.
    #[arg(long, value_name = "TEXT")]
    pub project: Option<String>,
    /// First day, inclusive (YYYY-MM-DD or YYYYMMDD).
    #[arg(long)]
    pub since: Option<String>,
    /// Last day, inclusive (YYYY-MM-DD or YYYYMMDD).
    #[arg(long)]
    pub until: Option<String>,
    /// IANA time zone of those days (and of usage's hours, weeks and months; default: the local
    /// zone).
    #[arg(long)]
    pub timezone: Option<String>,
}

impl SessionFilter {
    /// The days asked for, in the zone asked for.
    pub fn days(&self) -> anyhow::Result<DayRange> {
        DayRange::parse(self.since.as_deref(), self.until.as_deref(), self.timezone.as_deref())
            .map_err(anyhow::Error::msg)
    }
}
