"""The gateway's gRPC surface: NotificationService and AdminService over the operations layer."""
